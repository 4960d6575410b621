//! `sync`'s plan for one ref, as plain data: what to do given which sides have it and how
//! they stand.

use serde::Serialize;

use gix::ObjectId;

use crate::store::Standing;

/// Which side `sync --take` keeps when a workflow has diverged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    Local,
    Remote,
}

/// What to do with one ref: the plan, before anything is carried out; in reports, what was
/// done.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Action {
    #[serde(rename = "up_to_date")]
    Nothing,
    /// Only the remote has it: create it here.
    #[serde(rename = "adopted")]
    Adopt,
    #[serde(rename = "fast_forwarded")]
    FastForward,
    /// Only this clone has it, or has more of it: push.
    #[serde(rename = "pushed")]
    Push,
    /// Both moved on: change nothing, report.
    #[serde(rename = "diverged")]
    Diverged,
    /// Diverged, and `--take local`: keep the remote's tip under a backup ref, push ours.
    #[serde(rename = "took_local")]
    TakeLocal,
    /// Diverged, and `--take remote`: keep our tip under a backup ref, move to theirs.
    #[serde(rename = "took_remote")]
    TakeRemote,
}

/// The plan for one ref. `standing` is `None` when either side is missing.
pub fn plan(local: bool, remote: bool, standing: Option<Standing>, take: Option<Side>) -> Action {
    match (local, remote, standing) {
        (false, false, _) => Action::Nothing,
        (false, true, _) => Action::Adopt,
        (true, false, _) => Action::Push,
        (true, true, Some(Standing::Equal) | None) => Action::Nothing,
        (true, true, Some(Standing::Behind)) => Action::FastForward,
        (true, true, Some(Standing::Ahead)) => Action::Push,
        (true, true, Some(Standing::Diverged)) => match take {
            None => Action::Diverged,
            Some(Side::Local) => Action::TakeLocal,
            Some(Side::Remote) => Action::TakeRemote,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn every_combination_has_one_plan() {
        use Action::{Adopt, FastForward, Nothing, Push, TakeLocal, TakeRemote};
        use Standing::{Ahead, Behind, Equal};
        let cases = [
            (false, false, None, None, Nothing),
            (false, true, None, None, Adopt),
            (true, false, None, None, Push),
            (true, true, Some(Equal), None, Nothing),
            (true, true, Some(Behind), None, FastForward),
            (true, true, Some(Ahead), None, Push),
            (true, true, Some(Standing::Diverged), None, Action::Diverged),
            (
                true,
                true,
                Some(Standing::Diverged),
                Some(Side::Local),
                TakeLocal,
            ),
            (
                true,
                true,
                Some(Standing::Diverged),
                Some(Side::Remote),
                TakeRemote,
            ),
            // --take changes nothing that has not diverged.
            (true, true, Some(Behind), Some(Side::Local), FastForward),
            (true, true, Some(Ahead), Some(Side::Remote), Push),
            (false, true, None, Some(Side::Local), Adopt),
        ];
        for (local, remote, standing, take, expected) in cases {
            assert_eq!(
                plan(local, remote, standing, take),
                expected,
                "{local} {remote} {standing:?} {take:?}"
            );
        }
    }
}

/// One ref to push, with the lease that protects it.
#[derive(Clone, Debug)]
pub(super) struct Push {
    /// What to push (a commit id); `None` deletes the ref on the remote (a workflow the
    /// archive pushed with it holds at the tip seen).
    pub(super) source: Option<ObjectId>,
    /// The ref on the remote.
    pub(super) target: String,
    /// The remote-tracking ref that shows what we saw of `target`.
    pub(super) tracking: String,
    /// The tip we saw on the remote (`None`: absent).
    pub(super) seen: Option<ObjectId>,
    /// Pushed with `--force-with-lease=<target>:<seen>`; otherwise a plain, never forced,
    /// push.
    pub(super) leased: bool,
}
