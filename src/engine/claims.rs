//! Claims on PRs (docs/refs.md, "Claims"): taken when a plan is accepted (pushed
//! with the workflow's transition in one atomic push, then read back), renewed by `sync`,
//! released at the merge, listed for briefings and the board, and released or stolen by a
//! human. The remote decides who holds a claim when there is one; the local ref, moved by
//! compare-and-swap, decides between the worktrees of one clone, and alone without a remote.

use gix::ObjectId;
use serde::Serialize;

use super::{EngineError, Facts, Session};
use crate::config::Config;
use crate::exec::GitError;
use crate::store::{Claim, Snapshot, claim_ref, tracking_claim_ref};
use crate::workflow::claims::{self as rules, Found};
use crate::workflow::{State, Status};

/// The clock claims are judged by: seconds since the epoch. A debug build (the tests') takes
/// `GIT_ORCHESTRATE_NOW` instead; a release build never does, so that an agent cannot move
/// its own clock past another's claim.
pub fn now() -> i64 {
    if cfg!(debug_assertions)
        && let Some(now) = std::env::var("GIT_ORCHESTRATE_NOW")
            .ok()
            .and_then(|v| v.trim().parse::<i64>().ok())
    {
        return now;
    }
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

/// The remote claims are taken through (docs/refs.md, "Claims"): the one main is merged through
/// ([`super::remote::coordination_remote`]), also before the workflow exists.
pub fn claim_remote(
    session: &Session,
    state: Option<&State>,
) -> Result<Option<String>, EngineError> {
    remote_of(session, &session.load_config(state)?.config)
}

/// [`claim_remote`] under the configuration `config`, read already.
fn remote_of(session: &Session, config: &Config) -> Result<Option<String>, EngineError> {
    super::remote::remote_under(session, config)
}

/// A claim as a listing shows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ClaimView {
    /// The PR's key: the slug of its master-plan heading.
    pub pr: String,
    /// `local`, or the remote whose copy (as last fetched) this is.
    pub source: String,
    pub commit: String,
    /// `None` when the ref holds no claim of ours (a remote may hold anything there).
    pub claim: Option<Claim>,
    pub expired: bool,
}

/// Every claim this clone knows: its own refs, and each remote's as last fetched. No network.
pub fn list(session: &Session) -> Result<Vec<ClaimView>, EngineError> {
    let store = &session.store;
    let now = now();
    let mut out = Vec::new();
    let mut sources = vec![("local".to_string(), store.local_claims()?)];
    for remote in session.git.remotes()? {
        let claims = store.tracking_claims(&remote)?;
        sources.push((remote, claims));
    }
    for (source, claims) in sources {
        for (pr, id) in claims {
            let claim = store.read_claim(id)?.map(|(claim, _)| claim);
            let expired = claim
                .as_ref()
                .is_none_or(|c| rules::expired(c.expires, now));
            out.push(ClaimView {
                pr,
                source: source.clone(),
                commit: id.to_string(),
                claim,
                expired,
            });
        }
    }
    Ok(out)
}

/// The claims in force for the PRs of the master plan: by PR key, the holder's claim, as the
/// remote was last seen (else as this clone holds it). For briefings, `--no-pr-left` and the
/// board.
pub fn in_force(
    session: &Session,
    remote: Option<&str>,
) -> Result<std::collections::BTreeMap<String, Claim>, EngineError> {
    let store = &session.store;
    let now = now();
    let mut refs = store.local_claims()?;
    if let Some(remote) = remote {
        // The remote decides; a local ref it no longer holds is stale.
        refs = store.tracking_claims(remote)?;
        for (pr, id) in store.local_claims()? {
            refs.entry(pr).or_insert(id);
        }
    }
    let mut out = std::collections::BTreeMap::new();
    for (pr, id) in refs {
        if let Some((claim, _)) = store.read_claim(id)?
            && !rules::expired(claim.expires, now)
        {
            out.insert(pr, claim);
        }
    }
    Ok(out)
}

/// A claim about to be taken: written, not yet in force.
pub(crate) struct Pending {
    pr: String,
    commit: ObjectId,
    /// The workflow's tip the transition grows from.
    tip: ObjectId,
    /// The local ref as it was read.
    local_before: Option<ObjectId>,
    remote: Option<RemoteLease>,
}

struct RemoteLease {
    name: String,
    /// The remote's claim ref as read just now: the lease.
    seen: Option<ObjectId>,
    /// The remote's workflow ref, when the transition goes along: it fast-forwards it.
    workflow_seen: Option<Option<ObjectId>>,
}

/// The refusal when `claim` (or an unreadable ref) holds `pr`.
fn lost(pr: &str, claim: Option<&Claim>) -> EngineError {
    let (who, since) = match claim {
        Some(c) => (c.holder(), format!(" since {}", format_epoch(c.since))),
        None => (
            "a ref that holds no claim of ours".to_string(),
            String::new(),
        ),
    };
    super::wrong_state(
        Status::Initializing,
        format!("the plan is not accepted: PR {pr} is claimed by {who}{since}"),
        format!(
            "Plan another PR: the briefing (`git orchestrate get-task`) lists which are free. If {who} \
             has stopped, its claim lapses after [claims] ttl, or a human runs `git orchestrate claim steal {pr}`."
        ),
    )
}

/// A time as `2026-11-26 07:05:00 +0000`.
pub fn format_epoch(seconds: i64) -> String {
    crate::store::format_time(gix::date::Time::new(seconds, 0))
}

/// What this machine calls itself and its user, for a claim's holder: `$USER` (or
/// `$LOGNAME`), else the committer's email as git resolves it (an agent's sandbox often has
/// no `$USER`), so that a holder reads as someone a human can find.
fn host_and_user(session: &Session) -> (String, String) {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .filter(|h| !h.trim().is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_default();
    let user = std::env::var("USER")
        .ok()
        .filter(|u| !u.trim().is_empty())
        .or_else(|| std::env::var("LOGNAME").ok())
        .filter(|u| !u.trim().is_empty())
        .or_else(|| {
            session
                .store
                .identity()
                .map(|(_, email)| String::from_utf8_lossy(&email).into_owned())
        })
        .unwrap_or_default();
    (host.trim().to_string(), user.trim().to_string())
}

/// 128 random bits, so that no two claimers build the same commit (an identical commit
/// would push as "up to date" for the loser).
fn nonce() -> String {
    use std::io::Read;
    let mut bytes = [0u8; 16];
    let random = std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut bytes));
    if random.is_err() {
        // No /dev/urandom: the time, the process and a counter are unique enough per clone.
        let seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let mixed = seed ^ (u128::from(std::process::id()) << 64);
        bytes = mixed.to_le_bytes();
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The master plan on main as text, when there is one (not read over the input cap).
pub(crate) fn master_plan_text(
    session: &Session,
    state: &State,
) -> Result<Option<String>, EngineError> {
    master_plan_on(session, &session.facts(Some(state))?)
}

/// [`master_plan_text`] under the facts of the command that asks.
fn master_plan_on(session: &Session, facts: &Facts) -> Result<Option<String>, EngineError> {
    let Some(id) = session.master_plan_blob(&facts.main, &facts.config().master_plan)? else {
        return Ok(None);
    };
    Ok(session
        .store
        .blob_within(&id, crate::input::CAP)?
        .ok()
        .map(|bytes| String::from_utf8_lossy(&bytes).into_owned()))
}

/// Stores the transition `t` from `snapshot`; one that accepts a plan claims its PR first
/// (docs/refs.md, "Claims"): the claim is pushed with the transition, and a lost claim leaves the workflow
/// where it was.
pub(crate) fn commit_claiming(
    session: &Session,
    facts: &Facts,
    snapshot: &Snapshot,
    t: &crate::workflow::Transition,
    output: Option<&[u8]>,
) -> Result<(), EngineError> {
    match &t.input {
        crate::workflow::Event::PlanSubmitted { plan, .. } => {
            let pending = prepare(session, facts, snapshot, &plan.pr_title)?;
            session.commit_before(snapshot, t, output, |commit| {
                land(session, &pending, commit)
            })?;
            session.store.forget_plan_push();
            Ok(())
        }
        _ => {
            session.commit(snapshot, t, output)?;
            // Best effort: a claim that is not renewed lapses, and the next write tries again.
            let _ = renew_locally(session, facts, &t.state);
            Ok(())
        }
    }
}

/// A plan acceptance killed after its push (docs/refs.md, "Claims") left the remote holding
/// its transition, one ahead of this clone's tip: the next command adopts it, so that the
/// re-run does not accept the plan a second time in a transition of its own, which the remote
/// would never take (`sync` would call the two copies diverged). The remote is read only
/// while the record of such a push is there. Best effort: a remote that cannot be read now is
/// read at the next command.
pub(crate) fn adopt_pushed_plan(session: &Session) -> Result<(), EngineError> {
    let store = &session.store;
    let Some((remote, from, to)) = store.plan_push() else {
        return Ok(());
    };
    let reference = store.ref_name();
    if store.ref_tip(&reference)? != Some(from) {
        // It landed here, or the workflow moved on since: nothing is left to adopt.
        store.forget_plan_push();
        return Ok(());
    }
    let Ok(listed) = session.git.ls_remote(&remote, &[&reference]) else {
        return Ok(());
    };
    let theirs = listed
        .iter()
        .find(|(name, _)| *name == reference)
        .and_then(|(_, id)| ObjectId::from_hex(id.as_bytes()).ok());
    if theirs == Some(to) {
        let workflow = store.workflow().to_string();
        match store.move_ref(
            crate::store::LocalRef::Workflow(&workflow),
            Some(from),
            to,
            "adopt the plan acceptance the remote holds (its push landed)",
        ) {
            // Another command of this workflow moved it meanwhile: it reads the rest.
            Ok(()) | Err(crate::store::WriteError::Conflict) => {}
            Err(e) => return Err(e.into()),
        }
    }
    store.forget_plan_push();
    Ok(())
}

/// Without a remote nothing `sync`s, so the workflow's own writes keep its claim: renewed by
/// compare-and-swap once half its ttl has passed (the worktrees of one clone judge it by the
/// local ref). With a remote, `sync` renews it there.
fn renew_locally(session: &Session, facts: &Facts, after: &State) -> Result<(), EngineError> {
    if remote_of(session, facts.config())?.is_some() {
        return Ok(());
    }
    let store = &session.store;
    let claims = store.local_claims()?;
    if claims.is_empty() {
        return Ok(());
    }
    // The configuration in force after the transition, which the claim is renewed after.
    let ttl = ttl_of(&session.load_config(Some(after))?.config);
    let now = now();
    for (pr, id) in claims {
        let Some((claim, _)) = store.read_claim(id)? else {
            continue;
        };
        if claim.workflow != store.workflow() || claim.expires.saturating_sub(now) > ttl / 2 {
            continue;
        }
        let renewed = Claim {
            expires: now.saturating_add(ttl),
            nonce: nonce(),
            ..claim
        };
        let new = store.write_claim(&renewed)?;
        store.move_claim_ref(&claim_ref(&pr), Some(id), Some(new), "renew the claim")?;
        store.forget_claim(id);
    }
    Ok(())
}

/// Decides whether the workflow in `snap` may claim the PR titled `title`, and writes the
/// claim commit it would take: refused (exit 4, naming the holder) when another holds it.
/// Gathers what the claimer sees (the remote's claims and master plan, this clone's claims),
/// asks the pure rules (`workflow::claims::{claim_key, claim_times}`), then writes.
pub(crate) fn prepare(
    session: &Session,
    facts: &Facts,
    snap: &Snapshot,
    title: &str,
) -> Result<Pending, EngineError> {
    let scene = look_around(session, facts)?;
    let pr = rules::claim_key(scene.master_plan.as_deref(), title)
        .map_err(|heading| done_refusal(&heading, scene.remote.as_deref()))?;
    let local_before = scene.local_claims.get(&pr).copied();
    let (current, lease) = match (&scene.remote, scene.view) {
        (Some(remote), Some(view)) => {
            let lease = remote_lease(session, snap, remote, view, &pr)?;
            (lease.seen, Some(lease))
        }
        _ => (local_before, None),
    };
    let workflow = session.store.workflow().to_string();
    let now = now();
    let previous = match current {
        Some(id) => session.store.read_claim(id)?.map(|(claim, _)| claim),
        None => None,
    };
    let held = current.map(|_| rules::Held {
        // A ref that holds no claim of ours has long expired: it may be replaced.
        found: Found {
            workflow: previous.as_ref().map_or("", |c| c.workflow.as_str()),
            expires: previous.as_ref().map_or(0, |c| c.expires),
            ours: current == local_before,
        },
        since: previous.as_ref().map(|c| c.since),
    });
    let Some((since, expires)) =
        rules::claim_times(held.as_ref(), &workflow, now, ttl_of(facts.config()))
    else {
        return Err(lost(&pr, previous.as_ref()));
    };
    let (host, user) = host_and_user(session);
    let claim = Claim {
        slug: pr.clone(),
        workflow,
        host,
        user,
        since,
        expires,
        nonce: nonce(),
    };
    let commit = session.store.write_claim(&claim)?;
    Ok(Pending {
        pr,
        commit,
        tip: snap.tip,
        local_before,
        remote: lease,
    })
}

/// What a claimer sees before it judges: the remote it claims through, what that remote
/// holds, the master plan as its main has it, and this clone's claims.
struct Scene {
    remote: Option<String>,
    view: Option<RemoteView>,
    master_plan: Option<String>,
    local_claims: std::collections::BTreeMap<String, ObjectId>,
}

fn look_around(session: &Session, facts: &Facts) -> Result<Scene, EngineError> {
    let remote = remote_of(session, facts.config())?;
    // This clone's claims are read before the remote's: a claim another worktree's claimer
    // wrote here after the remote was read could be one whose push has landed since, and
    // replacing it would leave the winner without its local ref (see `land`).
    let local_claims = session.store.local_claims()?;
    // The master plan as the remote's main has it: a PR another clone merged is [DONE]
    // there before this clone's main knows it.
    let view = match &remote {
        Some(remote) => Some(look(session, facts, remote)?),
        None => None,
    };
    let master_plan = match (&remote, &view) {
        (Some(remote), Some(view)) => remote_master_plan(session, facts, remote, view)?,
        _ => master_plan_on(session, facts)?,
    };
    Ok(Scene {
        remote,
        view,
        master_plan,
        local_claims,
    })
}

/// The lease a claim on `pr` is pushed against: the remote's claim ref as `view` read it
/// (its commit fetched when it is not here yet, so that its holder can be read), and the
/// remote's workflow ref when the transition fast-forwards it.
fn remote_lease(
    session: &Session,
    snap: &Snapshot,
    remote: &str,
    view: RemoteView,
    pr: &str,
) -> Result<RemoteLease, EngineError> {
    let store = &session.store;
    let name = claim_ref(pr);
    let seen = view.claims.get(&name).copied();
    if let Some(id) = seen
        && store.read_claim(id)?.is_none()
    {
        // Another's claim, not here yet: fetched to read its holder. A ref that holds no
        // claim of ours stays unreadable, and is judged so.
        let spec = format!("+{name}:{}", tracking_claim_ref(remote, pr));
        let _ = session.git.fetch(remote, &[spec]);
    }
    store.set_tracking_claim(remote, pr, seen)?;
    // The transition goes along only when it fast-forwards the remote's workflow.
    let workflow_seen = match view.workflow {
        None => Some(None),
        Some(theirs) if store.ref_tip(&store.ref_name())?.is_some() => {
            let related = session
                .git
                .is_ancestor(&theirs.to_string(), &snap.tip.to_string());
            matches!(related, Ok(true)).then_some(Some(theirs))
        }
        Some(_) => None,
    };
    Ok(RemoteLease {
        name: remote.to_string(),
        seen,
        workflow_seen,
    })
}

/// What the remote holds, as one `git ls-remote` lists it: its main branch, every claim, and
/// this workflow.
struct RemoteView {
    main: Option<String>,
    /// By full ref name.
    claims: std::collections::HashMap<String, ObjectId>,
    workflow: Option<ObjectId>,
}

fn look(session: &Session, facts: &Facts, remote: &str) -> Result<RemoteView, EngineError> {
    let main = format!("refs/heads/{}", facts.main);
    let workflow = session.store.ref_name();
    let claims = format!("{}*", crate::store::CLAIMS);
    let listed = session
        .git
        .ls_remote(remote, &[&main, &workflow, &claims])
        .map_err(|e| remote_error(remote, format!("read the claims on {remote}"), e))?;
    let mut view = RemoteView {
        main: None,
        claims: std::collections::HashMap::new(),
        workflow: None,
    };
    for (name, id) in listed {
        if name == main {
            view.main = Some(id);
        } else if let Ok(id) = ObjectId::from_hex(id.as_bytes()) {
            if name == workflow {
                view.workflow = Some(id);
            } else if name.starts_with(crate::store::CLAIMS) {
                view.claims.insert(name, id);
            }
        }
    }
    Ok(view)
}

/// The master plan on `remote`'s main branch, fetched into `refs/remotes/<remote>/<main>`
/// when this clone does not have that commit yet; this clone's when the remote has no main.
fn remote_master_plan(
    session: &Session,
    facts: &Facts,
    remote: &str,
    view: &RemoteView,
) -> Result<Option<String>, EngineError> {
    let Some(id) = &view.main else {
        return master_plan_on(session, facts);
    };
    if session.git.rev_parse(&format!("{id}^{{commit}}")).is_err() {
        let main = &facts.main;
        let spec = format!(
            "+refs/heads/{main}:{}",
            crate::store::tracking_branch_ref(remote, main)
        );
        session
            .git
            .fetch(remote, &[spec])
            .map_err(|e| remote_error(remote, format!("fetch {main} from {remote}"), e))?;
    }
    session.master_plan_at(id, &facts.config().master_plan)
}

/// The refusal of a plan for a PR the master plan marks [DONE] (and no open heading names):
/// merged already, by this workflow or another.
fn done_refusal(heading: &str, remote: Option<&str>) -> EngineError {
    super::wrong_state(
        Status::Initializing,
        format!(
            "the plan is not accepted: \"{heading}\" is done on {} main: it was merged already",
            remote.map_or_else(|| "the".to_string(), |r| format!("{r}'s"))
        ),
        "Run `git orchestrate get-task`: it brings main up to date, and its briefing names the PRs still free. Plan one of those.",
    )
}

/// The remote's claim on `pr` and its copy of this workflow (one `ls-remote`), the claim's
/// commit fetched when it is not here yet so that its holder can be read.
fn read_remote(
    session: &Session,
    remote: &str,
    pr: &str,
) -> Result<(Option<ObjectId>, Option<ObjectId>), EngineError> {
    let name = claim_ref(pr);
    let workflow_ref = session.store.ref_name();
    let listed = session
        .git
        .ls_remote(remote, &[&name, &workflow_ref])
        .map_err(|e| remote_error(remote, format!("read the claim on {pr} from {remote}"), e))?;
    let id_of = |wanted: &str| {
        listed
            .iter()
            .find(|(n, _)| n == wanted)
            .and_then(|(_, id)| ObjectId::from_hex(id.as_bytes()).ok())
    };
    let claim = id_of(&name);
    if let Some(id) = claim
        && session.store.read_claim(id)?.is_none()
    {
        let spec = format!("+{name}:{}", tracking_claim_ref(remote, pr));
        // A ref that does not hold a claim of ours stays unreadable; that is judged later.
        let _ = session.git.fetch(remote, &[spec]);
    }
    session.store.set_tracking_claim(remote, pr, claim)?;
    Ok((claim, id_of(&workflow_ref)))
}

fn remote_error(remote: &str, what: String, e: GitError) -> EngineError {
    EngineError::Remote {
        remote: remote.to_string(),
        what,
        answer: e.stderr.trim().to_string(),
        hint: format!(
            "Nothing was claimed and the plan is not accepted. Check that `git fetch {remote}` works \
             (network, credentials), then submit the plan again."
        ),
    }
}

/// Takes the claim `pending` describes, the transition `transition` (which accepts the plan)
/// going along to the remote in the same atomic push where the server offers it; then reads
/// the remote's claim back: only the clone whose commit is there holds it. Any error leaves
/// the local claim ref as it was, and the caller does not move the workflow.
pub(crate) fn land(
    session: &Session,
    pending: &Pending,
    transition: ObjectId,
) -> Result<(), EngineError> {
    let store = &session.store;
    let name = claim_ref(&pending.pr);
    store.move_claim_ref(
        &name,
        pending.local_before,
        Some(pending.commit),
        &format!("claim {}", pending.pr),
    )?;
    let Some(lease) = &pending.remote else {
        return Ok(());
    };
    // Puts the local ref back to `back`, unless it moved meanwhile (another worktree's
    // claimer, which undoes its own).
    let undo = |back: Option<ObjectId>| {
        let _ = store.move_claim_ref(
            &name,
            Some(pending.commit),
            back,
            &format!("undo the claim on {}", pending.pr),
        );
    };
    if lease.workflow_seen.is_some() {
        store.note_plan_push(&lease.name, pending.tip, transition);
    }
    let pushed = push_claim(session, lease, &name, pending.commit, transition);
    crate::crash::crash_point("plan-pushed");
    // Read back even when the push failed: a push whose answer was lost may have landed,
    // and a claim of ours left there with nothing here would lock this workflow out.
    let (now_there, _) = match read_remote(session, &lease.name, &pending.pr) {
        Ok(read) => read,
        // Whether it landed is not known: the local ref keeps this commit, so that a retry
        // that finds it on the remote holds it, and one that does not judges it as absent.
        Err(e) => {
            pushed?;
            return Err(e);
        }
    };
    if now_there == Some(pending.commit) {
        // Another worktree's claimer of this clone may have replaced the local ref after
        // this one wrote it (it read this claim as its lease, before the push landed): the
        // ref is this claim's again, whatever it holds now.
        hold_locally(session, &name, pending.commit);
        return Ok(());
    }
    // What the local ref held before is restored only when the remote holds it: it may be
    // another worktree's claim that was in flight and has lost since (its own undo found
    // this claim in its place), which no ref may keep.
    undo(
        pending
            .local_before
            .filter(|before| Some(*before) == now_there),
    );
    store.forget_claim(pending.commit);
    // Atomic with the claim, the transition did not land either (or went alone, when the
    // claim was pushed without it).
    store.forget_plan_push();
    pushed?;
    let holder = match now_there {
        Some(id) => store.read_claim(id)?.map(|(claim, _)| claim),
        None => None,
    };
    Err(lost(&pending.pr, holder.as_ref()))
}

/// Sets the local claim ref `name` to `commit`, which the remote was just seen to hold for
/// this workflow, from whatever it holds: a loser's claim left there would be renewed or
/// released by `sync` in this clone's name, and this claim not. Best effort: the remote
/// decides, and only claimers that are about to undo their own write contend here.
fn hold_locally(session: &Session, name: &str, commit: ObjectId) {
    let store = &session.store;
    for _ in 0..100 {
        let Ok(current) = store.ref_tip(name) else {
            return;
        };
        if current == Some(commit) {
            return;
        }
        match store.move_claim_ref(name, current, Some(commit), "the remote holds this claim") {
            Err(crate::store::WriteError::Conflict) => continue,
            _ => return,
        }
    }
}

/// One push: the claim with a lease naming the value read, and the transition when it
/// fast-forwards the remote's workflow; the claim alone when the server has no atomic push.
/// A push the lease refuses is no error here: the read-back tells who won.
fn push_claim(
    session: &Session,
    lease: &RemoteLease,
    name: &str,
    commit: ObjectId,
    transition: ObjectId,
) -> Result<(), EngineError> {
    let git = &session.git;
    let claim_lease = (name.to_string(), lease.seen.map(|id| id.to_string()));
    let claim_spec = format!("{commit}:{name}");
    let workflow_ref = session.store.ref_name();
    let together = lease.workflow_seen.map(|seen| {
        (
            (workflow_ref.clone(), seen.map(|id| id.to_string())),
            format!("{transition}:{workflow_ref}"),
        )
    });
    let result = match &together {
        Some((workflow_lease, workflow_spec)) => git.push_atomic(
            &lease.name,
            &[claim_lease.clone(), workflow_lease.clone()],
            &[claim_spec.clone(), workflow_spec.clone()],
        ),
        None => git.push_atomic(
            &lease.name,
            std::slice::from_ref(&claim_lease),
            std::slice::from_ref(&claim_spec),
        ),
    };
    let Err(error) = result else {
        return Ok(());
    };
    if lost_lease(&error, name) {
        return Ok(());
    }
    // No atomic push on this server, or the workflow's ref refused: the claim alone.
    if together.is_some() {
        match git.push_atomic(
            &lease.name,
            std::slice::from_ref(&claim_lease),
            std::slice::from_ref(&claim_spec),
        ) {
            Ok(_) => return Ok(()),
            Err(e) if lost_lease(&e, name) => return Ok(()),
            Err(_) => {}
        }
    }
    Err(remote_error(
        &lease.name,
        format!("push the claim on {name} to {}", lease.name),
        error,
    ))
}

/// True when git refused to move `name` because its lease did not hold (another claimer
/// moved it first); not when only the other ref of an atomic push was refused.
fn lost_lease(error: &GitError, name: &str) -> bool {
    error.stderr.lines().any(|line| {
        line.contains(name)
            && ["stale info", "fetch first", "already exists"]
                .iter()
                .any(|why| line.contains(why))
    })
}

/// What `sync` did with this clone's claims.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Renewal {
    /// Renewed on the remote, by PR.
    pub renewed: Vec<String>,
    /// Released: their workflow no longer works on them.
    pub released: Vec<String>,
    /// No longer this clone's on the remote (a human released or stole them, or they lapsed
    /// and were taken over): the local ref is dropped, and the holder named.
    pub lost: Vec<String>,
    /// The remote's claims deleted with the archive (docs/refs.md, "The archive"): their
    /// workflow is archived, or they lapsed with no live workflow behind them.
    pub archived: Vec<String>,
}

/// After `sync`'s fetch (which mirrored the remote's claims): each claim this clone holds on
/// `remote` is renewed while its workflow still works on a PR, released when it does not;
/// one that the remote no longer holds as ours is dropped here and named. One atomic push.
pub fn renew(session: &Session, remote: &str) -> Result<Renewal, EngineError> {
    let store = &session.store;
    adopt_own(session, remote)?;
    let theirs = store.tracking_claims(remote)?;
    let workflows = store.local_workflows()?;
    let now = now();
    let mut report = Renewal::default();
    let mut leases = Vec::new();
    let mut specs = Vec::new();
    let mut after: Vec<(String, ObjectId, Option<ObjectId>)> = Vec::new();
    for (pr, id) in store.local_claims()? {
        let Some((claim, _)) = store.read_claim(id)? else {
            continue;
        };
        let name = claim_ref(&pr);
        if theirs.get(&pr) != Some(&id) {
            store.move_claim_ref(
                &name,
                Some(id),
                None,
                &format!("{remote} no longer holds the claim"),
            )?;
            let holder = match theirs.get(&pr) {
                Some(other) => store.read_claim(*other)?.map_or_else(
                    || "a ref that holds no claim".to_string(),
                    |(c, _)| c.holder(),
                ),
                None => "nobody".to_string(),
            };
            store.forget_claim(id);
            report.lost.push(format!("{pr} (now held by {holder})"));
            continue;
        }
        let working = match workflows.get(&claim.workflow) {
            Some(tip) => store
                .read_at(*tip, &crate::store::workflow_ref(&claim.workflow))
                .ok()
                .is_some_and(|snap| {
                    snap.summary.is_some() && snap.state.status() != Status::Initializing
                }),
            None => false,
        };
        leases.push((name.clone(), Some(id.to_string())));
        if working {
            let renewed = Claim {
                expires: now.saturating_add(ttl(session)?),
                nonce: nonce(),
                ..claim
            };
            let new = store.write_claim(&renewed)?;
            specs.push(format!("{new}:{name}"));
            after.push((pr.clone(), id, Some(new)));
            report.renewed.push(pr);
        } else {
            specs.push(format!(":{name}"));
            after.push((pr.clone(), id, None));
            report.released.push(pr);
        }
    }
    if specs.is_empty() {
        return Ok(report);
    }
    session
        .git
        .push_atomic(remote, &leases, &specs)
        .map_err(|e| EngineError::Remote {
            remote: remote.to_string(),
            what: format!("renew this clone's claims on {remote}"),
            answer: e.stderr.trim().to_string(),
            hint: format!("The workflows were synced; the claims were not renewed. Run `git orchestrate sync {remote}` again."),
        })?;
    for (pr, old, new) in after {
        store.move_claim_ref(&claim_ref(&pr), Some(old), new, "renew the claim")?;
        store.set_tracking_claim(remote, &pr, new)?;
        store.forget_claim(old);
    }
    Ok(report)
}

/// The remote's claims (as last fetched) that a workflow of this clone holds, taken by this
/// machine's user, where this clone has no claim ref of its own: a claimer that lost in a
/// sibling worktree can have deleted the winner's local ref after the read-back (seen once in
/// a thousand rounds of the claim race). Put back, so that `sync` renews them and the merge
/// releases them; the remote decided already who holds them.
fn adopt_own(session: &Session, remote: &str) -> Result<(), EngineError> {
    let store = &session.store;
    let workflows = store.local_workflows()?;
    let local = store.local_claims()?;
    for (pr, id) in store.tracking_claims(remote)? {
        if local.contains_key(&pr) {
            continue;
        }
        let Some((claim, _)) = store.read_claim(id)? else {
            continue;
        };
        // Written here, not merely naming this machine's user and host: another clone of the
        // same user on the same host would otherwise take it, and its `sync` renew a claim it
        // does not hold, so that a crashed holder's claim never lapses.
        if !workflows.contains_key(&claim.workflow) || !store.wrote_claim(id) {
            continue;
        }
        // Lost to a concurrent writer: the next sync looks again.
        let _ = store.move_claim_ref(
            &claim_ref(&pr),
            None,
            Some(id),
            "this clone's claim, held on the remote",
        );
    }
    Ok(())
}

fn ttl(session: &Session) -> Result<i64, EngineError> {
    let state = session.store.read_unless_ticket()?.map(|s| s.state);
    Ok(ttl_of(&session.load_config(state.as_ref())?.config))
}

/// How long a claim holds under `config`, in seconds.
fn ttl_of(config: &Config) -> i64 {
    i64::try_from(config.claims.ttl.as_secs()).unwrap_or(i64::MAX)
}

/// Releases the claims this workflow holds (at its merge): deleted on the remote with a
/// lease on this clone's commit, then here. A failure is returned for the briefing to name;
/// the claim then lapses at its expiry, or the next `sync` releases it.
pub fn release_own(session: &Session, state: &State) -> Result<Vec<String>, EngineError> {
    let store = &session.store;
    let workflow = store.workflow();
    let remote = claim_remote(session, Some(state))?;
    if let Some(remote) = &remote {
        adopt_own(session, remote)?;
    }
    let mut released = Vec::new();
    for (pr, id) in store.local_claims()? {
        let Some((claim, _)) = store.read_claim(id)? else {
            continue;
        };
        if claim.workflow != workflow {
            continue;
        }
        let name = claim_ref(&pr);
        if let Some(remote) = &remote {
            session
                .git
                .push_atomic(remote, &[(name.clone(), Some(id.to_string()))], &[format!(":{name}")])
                .map_err(|e| EngineError::Remote {
                    remote: remote.clone(),
                    what: format!("release the claim on {pr} on {remote}"),
                    answer: e.stderr.trim().to_string(),
                    hint: format!("It lapses at its expiry; `git orchestrate sync {remote}` releases it sooner."),
                })?;
            store.set_tracking_claim(remote, &pr, None)?;
        }
        store.move_claim_ref(&name, Some(id), None, &format!("release the claim on {pr}"))?;
        store.forget_claim(id);
        released.push(pr);
    }
    Ok(released)
}

/// What a human did with a claim.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct HumanClaim {
    pub pr: String,
    pub remote: Option<String>,
    /// Who held it before, when anyone did.
    pub previous: Option<Claim>,
    /// The claim now in force (`steal`), or none (`release`).
    pub now: Option<Claim>,
}

/// `claim release PR` (`steal: false`) or `claim steal PR` (`steal: true`, for this
/// workflow): a human's, whoever holds the claim and whenever it expires; leased against the
/// claim as read, so a claim that moves meanwhile is not overwritten blind.
pub fn human(
    session: &Session,
    pr: &str,
    steal: bool,
    signed: bool,
) -> Result<HumanClaim, EngineError> {
    let store = &session.store;
    // "" and "*" have no letter to make a key of: their slug would be the fallback `pr`, a
    // claim nobody named.
    if !pr.chars().any(char::is_alphanumeric) {
        return Err(EngineError::BadInput {
            message: format!("{pr:?} names no PR: a PR's key has letters or digits"),
            hint: "`git orchestrate claim list` shows the claims; a PR's key is its master-plan heading's slug.".into(),
        });
    }
    // A heading is one line of text: a key with a line break, an escape or a NUL was typed
    // by no one reading the plan, and its slug would quietly name another PR (`a\nb` is
    // `a-b`).
    if pr.chars().any(char::is_control) {
        return Err(EngineError::BadInput {
            message: format!(
                "{pr:?} names no PR: a PR's key or heading holds no control character"
            ),
            hint: "`git orchestrate claim list` shows the claims; a PR's key is its master-plan heading's slug.".into(),
        });
    }
    // A key is its own slug; a heading's text gives its key.
    let pr = rules::slug(pr);
    let state = store.read_unless_ticket()?.map(|s| s.state);
    let facts = session.facts(state.as_ref())?;
    let remote = remote_of(session, facts.config())?;
    let required = facts.config().human.require == crate::config::HumanProof::Signature;
    let verb = if steal { "steal" } else { "release" };
    match human_proof(required, signed, remote.is_some()) {
        HumanProof::Moves => {}
        HumanProof::Unsigned => {
            return Err(super::error::wrong_state(
                state.as_ref().map_or(Status::Initializing, State::status),
                format!(
                    "claim {verb} was refused: main's configuration requires [human] require = \
                     \"signature\", and GIT_ORCHESTRATE_HUMAN proves no human"
                ),
                format!(
                    "A human runs `git orchestrate claim {verb} {pr} --signed` with their SSH key as \
                     user.signingkey (gpg.format ssh): the server accepts the push of a key listed in \
                     main's [attest] humans."
                ),
            ));
        }
        HumanProof::NoServer => {
            return Err(EngineError::BadInput {
                message: format!(
                    "claim {verb} --signed needs a remote: a signed push is checked by the server"
                ),
                hint:
                    "Set the workflow's remote, or drop --signed where no server guards the claims."
                        .into(),
            });
        }
    }
    let name = claim_ref(&pr);
    let local = store.ref_tip(&name)?;
    let current = match &remote {
        Some(remote) => read_remote(session, remote, &pr)?.0,
        None => local,
    };
    let previous = match current {
        Some(id) => store.read_claim(id)?.map(|(c, _)| c),
        None => None,
    };
    if current.is_none() && !steal {
        return Err(EngineError::BadInput {
            message: format!("nobody claims PR {pr}"),
            hint: "`git orchestrate claim list` shows the claims; a PR's key is its master-plan heading's slug.".into(),
        });
    }
    let new = if steal {
        let claim = stolen(session, &pr, ttl(session)?);
        Some((store.write_claim(&claim)?, claim))
    } else {
        None
    };
    let new_id = new.as_ref().map(|(id, _)| *id);
    if let Some(remote) = &remote {
        push_human(session, remote, &pr, (current, new_id), signed)?;
    }
    if let Some(id) = current {
        store.forget_claim(id);
    }
    let local_now = store.ref_tip(&name)?;
    if local_now != new_id {
        store.move_claim_ref(
            &name,
            local_now,
            new_id,
            if steal {
                "a human stole the claim"
            } else {
                "a human released the claim"
            },
        )?;
    }
    Ok(HumanClaim {
        pr,
        remote,
        previous,
        now: new.map(|(_, claim)| claim),
    })
}

/// Whether a human's `claim release|steal` may move the claim.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum HumanProof {
    Moves,
    /// Main requires signed answers, and this one is not: an environment variable proves no
    /// human; the claim is moved by a signed push, whose key the server hook checks against
    /// [attest] humans.
    Unsigned,
    /// Signed, with no remote: a signed push is checked by the server, and there is none.
    NoServer,
}

fn human_proof(required: bool, signed: bool, remote: bool) -> HumanProof {
    match (required, signed, remote) {
        (true, false, _) => HumanProof::Unsigned,
        (_, true, false) => HumanProof::NoServer,
        _ => HumanProof::Moves,
    }
}

/// The claim a human's `claim steal` takes on `pr` for this workflow, from now.
fn stolen(session: &Session, pr: &str, ttl: i64) -> Claim {
    let (host, user) = host_and_user(session);
    let now = now();
    Claim {
        slug: pr.to_string(),
        workflow: session.store.workflow().to_string(),
        host,
        user,
        since: now,
        expires: now.saturating_add(ttl),
        nonce: nonce(),
    }
}

/// Moves the remote's claim ref on `pr` from `current` (the lease) to `new` (none: deleted),
/// in a push signed when `signed`; then its tracking ref.
fn push_human(
    session: &Session,
    remote: &str,
    pr: &str,
    (current, new): (Option<ObjectId>, Option<ObjectId>),
    signed: bool,
) -> Result<(), EngineError> {
    let name = claim_ref(pr);
    let spec = match new {
        Some(id) => format!("{id}:{name}"),
        None => format!(":{name}"),
    };
    session
        .git
        .push_atomic_as(
            remote,
            &[(name.clone(), current.map(|id| id.to_string()))],
            &[spec],
            signed,
        )
        .map_err(|e| EngineError::Remote {
            remote: remote.to_string(),
            what: format!("change the claim on {pr} on {remote}"),
            answer: e.stderr.trim().to_string(),
            hint: "The claim moved meanwhile, or the remote refused: nothing changed. Look again with \
                   `git orchestrate sync` and `git orchestrate claim list`."
                .into(),
        })?;
    session.store.set_tracking_claim(remote, pr, new)?;
    Ok(())
}

/// The claims in force that other workflows hold, by PR key: what this workflow may not plan.
pub fn held_by_others(
    session: &Session,
    state: &State,
) -> Result<std::collections::BTreeMap<String, Claim>, EngineError> {
    let remote = claim_remote(session, Some(state)).ok().flatten();
    held_through(session, remote.as_deref())
}

/// The claims other workflows hold, as known through `remote` (and locally).
fn held_through(
    session: &Session,
    remote: Option<&str>,
) -> Result<std::collections::BTreeMap<String, Claim>, EngineError> {
    let workflow = session.store.workflow();
    let mut held = in_force(session, remote)?;
    held.retain(|_, claim| claim.workflow != workflow);
    Ok(held)
}

/// For the INITIALIZING briefing: the master plan's PRs that other workflows claim, and
/// those done, when any is claimed (a lone agent's briefing stays as it was).
pub fn taken(
    session: &Session,
    facts: &Facts,
) -> Result<Vec<crate::workflow::briefing::TakenPr>, EngineError> {
    use crate::workflow::briefing::TakenPr;
    let remote = remote_of(session, facts.config()).ok().flatten();
    let mut held = held_through(session, remote.as_deref())?;
    if held.is_empty() {
        return Ok(Vec::new());
    }
    let text = master_plan_on(session, facts)?.unwrap_or_default();
    let holder = |c: &Claim| format!("{} since {}", c.holder(), format_epoch(c.since));
    let mut out = Vec::new();
    for (heading, done) in crate::workflow::master_plan::pr_headings(&text) {
        if done {
            out.push(TakenPr {
                pr: heading,
                claimed_by: None,
            });
        } else if let Some(claim) = held.remove(&rules::slug(&heading)) {
            out.push(TakenPr {
                pr: heading,
                claimed_by: Some(holder(&claim)),
            });
        }
    }
    // Claims on PRs no heading names (a plan outside the master plan): listed by key.
    for (pr, claim) in held {
        out.push(TakenPr {
            pr,
            claimed_by: Some(holder(&claim)),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    /// Each row: main requires a signature, the answer is signed, there is a remote.
    #[test]
    fn a_human_moves_a_claim_unless_a_signature_is_owed_or_nobody_checks_it() {
        #[rustfmt::skip]
        let table = [
            ((false, false, false), HumanProof::Moves),
            ((false, false, true), HumanProof::Moves),
            ((false, true, true), HumanProof::Moves),
            ((true, true, true), HumanProof::Moves),
            ((true, false, true), HumanProof::Unsigned),
            ((true, false, false), HumanProof::Unsigned),
            ((false, true, false), HumanProof::NoServer),
            ((true, true, false), HumanProof::NoServer),
        ];
        for ((required, signed, remote), expected) in table {
            assert_eq!(
                human_proof(required, signed, remote),
                expected,
                "required {required}, signed {signed}, remote {remote}"
            );
        }
    }

    #[test]
    fn a_lease_is_lost_only_on_the_claims_own_line() {
        let name = "refs/orchestrator/claims/pr-1";
        let stderr = |text: &str| GitError {
            command: "git push --atomic".into(),
            status: Some(1),
            stderr: text.to_string(),
        };
        #[rustfmt::skip]
        let table = [
            (" ! [rejected] abc -> refs/orchestrator/claims/pr-1 (stale info)", true),
            (" ! [rejected] abc -> refs/orchestrator/claims/pr-1 (fetch first)", true),
            (" ! [rejected] abc -> refs/orchestrator/claims/pr-1 (already exists)", true),
            (" ! [rejected] abc -> refs/orchestrator/workflows/main (stale info)", false),
            (" ! [remote rejected] abc -> refs/orchestrator/claims/pr-1 (atomic push failed)", false),
        ];
        for (text, expected) in table {
            assert_eq!(lost_lease(&stderr(text), name), expected, "{text}");
        }
    }
}

#[cfg(test)]
#[path = "claims_tests.rs"]
mod unit_tests;
