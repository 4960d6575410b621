//! Claims on PRs (docs/refs.md, "Claims"): `refs/orchestrator/claims/<pr-slug>`, one
//! parentless commit of the empty tree per claim whose message carries who holds the PR and
//! until when, with a random nonce so that no two claimers ever build the same commit; the
//! remote's copies under `refs/orchestrator/remotes/<remote>/claims/`.

use std::collections::BTreeMap;

use gix::ObjectId;
use gix::bstr::ByteSlice;
use gix::refs::FullName;
use gix::refs::transaction::{Change, LogChange, PreviousValue, RefEdit, RefLog};

use super::names::{CLAIMS, REMOTES};
use super::write::commit_object;
use super::{Store, StoreError, WriteError, git_err, loose};

/// The trailers a claim commit's message carries, in this order.
const CLAIM: &str = "Orchestrator-Claim";
const WORKFLOW: &str = "Orchestrator-Claim-Workflow";
const HOST: &str = "Orchestrator-Claim-Host";
const USER: &str = "Orchestrator-Claim-User";
const SINCE: &str = "Orchestrator-Claim-Since";
const EXPIRES: &str = "Orchestrator-Claim-Expires";
const NONCE: &str = "Orchestrator-Claim-Nonce";

/// A claim as its commit says it. Times are seconds since the epoch.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Claim {
    pub slug: String,
    pub workflow: String,
    pub host: String,
    pub user: String,
    /// When the PR was first claimed by this holder (kept across renewals).
    pub since: i64,
    pub expires: i64,
    pub nonce: String,
}

/// A claim commit too large to be one of ours is not read.
const MAX_CLAIM_MESSAGE: usize = 4096;

/// `refs/orchestrator/claims/<slug>`.
pub fn claim_ref(slug: &str) -> String {
    format!("{CLAIMS}{slug}")
}

/// `refs/orchestrator/remotes/<remote>/claims/<slug>`.
pub fn tracking_claim_ref(remote: &str, slug: &str) -> String {
    format!("{REMOTES}{remote}/claims/{slug}")
}

impl Claim {
    fn message(&self) -> String {
        format!(
            "claim {}\n\n{CLAIM}: {}\n{WORKFLOW}: {}\n{HOST}: {}\n{USER}: {}\n{SINCE}: {}\n{EXPIRES}: {}\n{NONCE}: {}\n",
            self.slug,
            self.slug,
            self.workflow,
            one_line(&self.host),
            one_line(&self.user),
            self.since,
            self.expires,
            self.nonce
        )
    }

    /// The claim a commit message states; `None` when it is not a claim of ours (a remote
    /// may hold anything under the claims namespace).
    pub fn parse(message: &str) -> Option<Claim> {
        if message.len() > MAX_CLAIM_MESSAGE {
            return None;
        }
        // A handful of fields, looked up by a scan: a map of them was most of the board's cost
        // of a claim.
        let mut fields: Vec<(&str, &str)> = Vec::with_capacity(8);
        for line in message.lines() {
            // The prefix holds no ": ", so a line starts with it exactly when its key does.
            if !line.starts_with(CLAIM) {
                continue;
            }
            if let Some((key, value)) = line.split_once(": ") {
                // The first statement of a field counts; a repeated one is not ours.
                if fields.iter().any(|(seen, _)| *seen == key) {
                    return None;
                }
                fields.push((key, value.trim()));
            }
        }
        Self::from_fields(|key| fields.iter().find(|(k, _)| *k == key).map(|(_, v)| *v))
    }

    /// The claim whose fields `field` gives, each trimmed, by trailer name; `None` unless
    /// they make one of ours.
    fn from_fields<'a>(field: impl Fn(&str) -> Option<&'a str>) -> Option<Claim> {
        let text = |key: &str| field(key).map(str::to_string);
        let number = |key: &str| field(key).and_then(|v| v.parse::<i64>().ok());
        // Host and user are printed in refusals and listings: whoever wrote the commit, they
        // are read as one plain line (no escape sequence reaches a terminal).
        let plain = |key: &str| text(key).map(|v| one_line(&v));
        let claim = Claim {
            slug: plain(CLAIM)?,
            workflow: text(WORKFLOW)?,
            host: plain(HOST)?,
            user: plain(USER)?,
            since: number(SINCE)?,
            expires: number(EXPIRES)?,
            nonce: text(NONCE)?,
        };
        (super::valid_workflow_name(&claim.workflow) && !claim.nonce.is_empty()).then_some(claim)
    }

    /// Who holds it, for messages: `workflow a (alice@host1)`.
    pub fn holder(&self) -> String {
        format!("workflow {} ({}@{})", self.workflow, self.user, self.host)
    }
}

/// Host and user names are the machine's, not ours: kept to one printable line.
pub fn one_line(text: &str) -> String {
    let cleaned: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .take(200)
        .collect();
    let cleaned = cleaned.trim();
    if cleaned.is_empty() {
        "unknown".to_string()
    } else {
        cleaned.to_string()
    }
}

impl Store {
    /// Every claim this clone holds a ref for, by slug.
    pub fn local_claims(&self) -> Result<BTreeMap<String, ObjectId>, StoreError> {
        self.refs_under(CLAIMS)
    }

    /// Every claim `remote` had when last fetched, by slug.
    pub fn tracking_claims(&self, remote: &str) -> Result<BTreeMap<String, ObjectId>, StoreError> {
        self.refs_under(&format!("{REMOTES}{remote}/claims/"))
    }

    /// The claim commit `id` states, with its committer time; `Ok(None)` when `id` is no
    /// claim of ours.
    pub fn read_claim(&self, id: ObjectId) -> Result<Option<(Claim, i64)>, StoreError> {
        // Through the store's reader: every claiming write reads its claim back.
        let Ok((gix::objs::Kind::Commit, data)) = self.object(id) else {
            return Ok(None);
        };
        let commit =
            gix::objs::CommitRef::from_bytes(&data, self.repo.object_hash()).map_err(git_err)?;
        let time = commit.time().map(|t| t.seconds).unwrap_or_default();
        let message = commit.message;
        Ok(message
            .to_str()
            .ok()
            .and_then(Claim::parse)
            .map(|claim| (claim, time)))
    }

    /// Stores the commit stating `claim` (no ref moves) and returns its id.
    pub fn write_claim(&self, claim: &Claim) -> Result<ObjectId, WriteError> {
        let mut objects = loose::LooseWriter::at(self.repo.objects_dir(), self.repo.object_hash());
        let tree = objects.write_object(&gix::objs::Tree::empty())?;
        let commit = commit_object(tree, None, &self.signature()?, &claim.message(), Vec::new());
        let id = objects.write_object(&commit)?;
        // Best effort: without the record, a claim whose local ref a sibling worktree's loser
        // dropped is not taken back by `sync`, and lapses at its expiry.
        let record = self.claim_written_file(&id);
        if let Some(dir) = record.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        let _ = std::fs::write(&record, b"");
        Ok(id)
    }

    /// True when this clone wrote the claim commit `id` (and has not forgotten it): another
    /// clone's claims are never renewed or taken back here, whoever's user and host they name.
    pub fn wrote_claim(&self, id: ObjectId) -> bool {
        self.claim_written_file(&id).is_file()
    }

    /// Forgets that this clone wrote the claim commit `id` (replaced, released or lost).
    pub fn forget_claim(&self, id: ObjectId) {
        let _ = std::fs::remove_file(self.claim_written_file(&id));
    }

    /// Moves the claim ref `name` (a full name) from `expected` (`None`: must not exist) to
    /// `new` (`None`: deleted), by compare-and-swap.
    pub fn move_claim_ref(
        &self,
        name: &str,
        expected: Option<ObjectId>,
        new: Option<ObjectId>,
        message: &str,
    ) -> Result<(), WriteError> {
        let full = FullName::try_from(name.to_string()).map_err(git_err)?;
        if let Some(git) = self.ref_commands()? {
            let message = format!("git-orchestrate: {message}");
            return self.move_ref_by_commands(
                git,
                name,
                expected,
                new,
                &message,
                &self.signature()?,
            );
        }
        let expected_id = expected;
        let expected = match expected {
            Some(id) => PreviousValue::MustExistAndMatch(gix::refs::Target::Object(id)),
            None => PreviousValue::MustNotExist,
        };
        let change = match new {
            Some(id) => Change::Update {
                log: LogChange {
                    mode: RefLog::AndReference,
                    force_create_reflog: true,
                    message: format!("git-orchestrate: {message}").into(),
                },
                expected,
                new: gix::refs::Target::Object(id),
            },
            None => Change::Delete {
                expected,
                log: RefLog::AndReference,
            },
        };
        self.refuse_waiting_ref(&full.as_bstr().to_str_lossy())?;
        let edit = RefEdit {
            change,
            name: full,
            deref: false,
        };
        let signature = self.signature()?;
        let mut time_buf = gix::date::parse::TimeBuf::default();
        match self
            .repo()?
            .edit_references_as(Some(edit), Some(signature.to_ref(&mut time_buf)))
        {
            Ok(_) => Ok(()),
            Err(e) if super::cas::is_lost_race(&e) => Err(WriteError::Conflict),
            // gix reports a ref expected at a value and found deleted as "not found", and a
            // deletion of one gone as "must exist": for a claim (or its tracking copy, which
            // every claimer of the clone mirrors) a ref no longer at the value this command
            // read is a lost race, whatever another process made of it meanwhile (deleted,
            // or deleted and set again).
            Err(_) if expected_id.is_some() && self.ref_tip(name).ok() != Some(expected_id) => {
                Err(WriteError::Conflict)
            }
            Err(e) => Err(WriteError::Store(git_err(e))),
        }
    }

    /// Sets the remote-tracking copy of a claim to what the remote was just seen to hold
    /// (`None`: it holds none), whatever it was: it mirrors the remote.
    pub fn set_tracking_claim(
        &self,
        remote: &str,
        slug: &str,
        id: Option<ObjectId>,
    ) -> Result<(), WriteError> {
        let name = tracking_claim_ref(remote, slug);
        let current = self.ref_tip(&name)?;
        if current == id {
            return Ok(());
        }
        // git moves no ref to an object it does not have (gix does): the claim the remote
        // was seen to hold and its fetch missed has moved on there since, a lost race.
        if let Some(id) = id
            && self.ref_commands()?.is_some()
            && !self.repo()?.has_object(id)
        {
            return Err(WriteError::Conflict);
        }
        match (current, id) {
            (None, None) => Ok(()),
            (current, new) => self.move_claim_ref(&name, current, new, "mirror the remote's claim"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use proptest::prelude::*;

    fn claim() -> Claim {
        Claim {
            slug: "pr-2-feat-multiply".into(),
            workflow: "a".into(),
            host: "box\n1".into(),
            user: "alice".into(),
            since: 1_795_000_000,
            expires: 1_795_007_200,
            nonce: "0123abcd".into(),
        }
    }

    #[test]
    fn a_claim_reads_back_from_its_message() {
        let message = claim().message();
        assert_eq!(
            message,
            "claim pr-2-feat-multiply\n\nOrchestrator-Claim: pr-2-feat-multiply\nOrchestrator-Claim-Workflow: a\n\
             Orchestrator-Claim-Host: box 1\nOrchestrator-Claim-User: alice\nOrchestrator-Claim-Since: 1795000000\n\
             Orchestrator-Claim-Expires: 1795007200\nOrchestrator-Claim-Nonce: 0123abcd\n"
        );
        let back = Claim::parse(&message).unwrap();
        assert_eq!(
            back,
            Claim {
                host: "box 1".into(),
                ..claim()
            }
        );
    }

    #[test]
    fn a_hostile_host_or_user_is_read_as_one_plain_line() {
        let message = claim()
            .message()
            .replace("Host: box 1", "Host: box\u{1b}[31m\u{7}")
            .replace("User: alice", "User: bob\r\u{8}root");
        let back = Claim::parse(&message).unwrap();
        assert_eq!(
            (back.host.as_str(), back.user.as_str()),
            ("box [31m", "bob  root")
        );
    }

    #[test]
    fn what_is_not_a_claim_of_ours_is_not_read_as_one() {
        let message = claim().message();
        assert_eq!(Claim::parse("claim x\n"), None);
        assert_eq!(
            Claim::parse(&message.replace(
                "Orchestrator-Claim-Workflow: a",
                "Orchestrator-Claim-Workflow: ../x"
            )),
            None
        );
        assert_eq!(
            Claim::parse(&format!("{message}Orchestrator-Claim-Workflow: b\n")),
            None,
            "a repeated field"
        );
        assert_eq!(Claim::parse(&message.replace("1795007200", "soon")), None);
        assert_eq!(Claim::parse(&"x".repeat(5000)), None);
    }

    #[test]
    fn claims_are_written_stored_and_moved_by_compare_and_swap() {
        use crate::test_git::git;
        let dir = tempfile::tempdir().unwrap();
        git(dir.path(), &["init", "--quiet", "--initial-branch=main"]);
        let store = Store::discover(dir.path(), "main").unwrap();
        let one = store.write_claim(&claim()).unwrap();
        let other = store
            .write_claim(&Claim {
                nonce: "ffff".into(),
                ..claim()
            })
            .unwrap();
        assert_ne!(one, other, "the nonce makes each claim its own commit");
        let name = claim_ref("pr-2-feat-multiply");
        store
            .move_claim_ref(&name, None, Some(one), "claim")
            .unwrap();
        assert!(matches!(
            store.move_claim_ref(&name, None, Some(other), "claim"),
            Err(WriteError::Conflict)
        ));
        assert!(matches!(
            store.move_claim_ref(&name, Some(other), None, "release"),
            Err(WriteError::Conflict)
        ));
        assert!(
            matches!(
                store.move_claim_ref(&claim_ref("gone"), Some(one), Some(other), "claim"),
                Err(WriteError::Conflict)
            ),
            "a ref expected and deleted meanwhile is a lost race"
        );
        let (read, _) = store.read_claim(one).unwrap().unwrap();
        assert_eq!(read.workflow, "a");
        assert_eq!(
            store
                .local_claims()
                .unwrap()
                .into_iter()
                .collect::<Vec<_>>(),
            vec![("pr-2-feat-multiply".to_string(), one)]
        );
        store
            .move_claim_ref(&name, Some(one), None, "release")
            .unwrap();
        assert!(store.local_claims().unwrap().is_empty());
        store
            .set_tracking_claim("origin", "x", Some(other))
            .unwrap();
        store.set_tracking_claim("origin", "x", Some(one)).unwrap();
        assert_eq!(
            store.tracking_claims("origin").unwrap().get("x"),
            Some(&one)
        );
        store.set_tracking_claim("origin", "x", None).unwrap();
        assert!(store.tracking_claims("origin").unwrap().is_empty());
    }

    /// The claim a message states, its fields gathered as the parser before this one gathered
    /// them (in a map): the oracle of `claims_are_read_as_they_were`.
    fn parse_by_map(message: &str) -> Option<Claim> {
        if message.len() > MAX_CLAIM_MESSAGE {
            return None;
        }
        let mut fields: BTreeMap<&str, &str> = BTreeMap::new();
        for line in message.lines() {
            if let Some((key, value)) = line.split_once(": ")
                && key.starts_with("Orchestrator-Claim")
                && fields.insert(key, value.trim()).is_some()
            {
                return None;
            }
        }
        Claim::from_fields(|key| fields.get(key).copied())
    }

    /// Lines a claim's message is made of, and lines that are nearly those.
    fn claim_lines() -> impl Strategy<Value = String> {
        let key = prop_oneof![
            Just(CLAIM.to_string()),
            Just(WORKFLOW.to_string()),
            Just(HOST.to_string()),
            Just(USER.to_string()),
            Just(SINCE.to_string()),
            Just(EXPIRES.to_string()),
            Just(NONCE.to_string()),
            "Orchestrator-Claim[-A-Za-z: ]{0,6}",
            "[A-Za-z -]{0,8}",
        ];
        let value = prop_oneof!["[a-z0-9 ]{0,8}", "-?[0-9]{1,4}", "[ :a\\t\\r]{0,4}"];
        let line = (
            key,
            prop_oneof![Just(": "), Just(":"), Just(" : "), Just(": : ")],
            value,
        )
            .prop_map(|(k, sep, v)| format!("{k}{sep}{v}"));
        prop::collection::vec(line, 0..12).prop_map(|lines| lines.join("\n"))
    }

    proptest! {
        /// Whatever a remote holds under the claims namespace, reading it never panics.
        #[test]
        fn parsing_any_message_never_panics(message in ".{0,600}") {
            let _ = Claim::parse(&message);
        }

        /// Any message, a claim's own or one near it, reads as the map-based parser read it.
        #[test]
        fn claims_are_read_as_they_were(message in claim_lines(), written in any::<bool>()) {
            let message = if written {
                format!("{}\n{message}", claim().message())
            } else {
                message
            };
            prop_assert_eq!(Claim::parse(&message), parse_by_map(&message));
        }

        #[test]
        fn host_and_user_round_trip_as_one_line(host in "\\PC{0,40}", user in "[a-z\\n\\t ]{0,20}") {
            let written = Claim { host: host.clone(), user: user.clone(), ..claim() };
            let back = Claim::parse(&written.message()).unwrap();
            prop_assert_eq!(back.host, one_line(&host));
            prop_assert_eq!(back.user, one_line(&user));
        }
    }
}
