//! The state of one command line being judged, which every part of the guard reads and
//! adds to.

use super::context::GuardContext;
use super::paths::{Checker, Cwds};
use super::words::Vars;

/// One command line being judged, with what it has set so far: variables, directories,
/// the branch HEAD is on.
pub(crate) struct Walk<'c> {
    pub(super) paths: Checker<'c>,
    pub(super) vars: Vars,
    pub(super) cwds: Cwds,
    pub(super) head: Option<String>,
    pub(super) home: Option<String>,
    pub(super) depth: usize,
    pub(super) commands: usize,
    /// Bytes of text read as lines (`eval`, `sh -c` read theirs again) and of words expanded.
    pub(super) read: usize,
    pub(super) expanded: std::cell::Cell<usize>,
}

impl<'c> Walk<'c> {
    pub(super) fn new(ctx: &'c GuardContext) -> Walk<'c> {
        Walk {
            paths: Checker::new(ctx),
            vars: Vars::default(),
            cwds: Cwds::new(&ctx.cwd),
            head: ctx.head_branch.clone(),
            home: std::env::var("HOME").ok(),
            depth: 0,
            commands: 0,
            read: 0,
            expanded: std::cell::Cell::new(0),
        }
    }
}
