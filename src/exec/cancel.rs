//! Cancelling the commands a long call runs, from another thread: the MCP server's
//! `notifications/cancelled` for a `submit_work` whose test is running. While a [`Cancel`]
//! is in force, every command [`super::run_shell`] starts is registered; cancelling kills
//! their process groups, and each run then fails with `ErrorKind::Interrupted`, so the
//! engine records nothing. The command line never sets one: one call runs at a time there.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

#[derive(Clone, Debug, Default)]
pub struct Cancel(Arc<Inner>);

#[derive(Debug, Default)]
struct Inner {
    cancelled: AtomicBool,
    /// The process groups running now, with their commands.
    running: Mutex<Vec<(u32, String)>>,
}

/// The cancel in force: one per process, since the MCP server runs one call at a time and
/// gates may run on several threads.
static CURRENT: Mutex<Option<Cancel>> = Mutex::new(None);

impl Cancel {
    pub fn new() -> Cancel {
        Cancel::default()
    }

    /// Kills what runs now and makes every later run of this call fail.
    pub fn cancel(&self) {
        self.0.cancelled.store(true, Ordering::SeqCst);
        let running = self
            .0
            .running
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        for (pgid, _) in running.iter() {
            super::group::kill_group(*pgid);
        }
    }

    pub fn is_cancelled(&self) -> bool {
        self.0.cancelled.load(Ordering::SeqCst)
    }

    /// The commands running now, oldest first: what a progress notification names.
    pub fn running(&self) -> Vec<String> {
        let running = self
            .0
            .running
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        running.iter().map(|(_, c)| c.clone()).collect()
    }

    /// Runs `f` with this cancel in force.
    pub fn scope<T>(&self, f: impl FnOnce() -> T) -> T {
        struct Reset;
        impl Drop for Reset {
            fn drop(&mut self) {
                *CURRENT.lock().unwrap_or_else(PoisonError::into_inner) = None;
            }
        }
        *CURRENT.lock().unwrap_or_else(PoisonError::into_inner) = Some(self.clone());
        let _reset = Reset;
        f()
    }
}

/// True when the call in progress was cancelled: checked once more before a write.
pub fn cancelled() -> bool {
    CURRENT
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .as_ref()
        .is_some_and(Cancel::is_cancelled)
}

/// A started command's process group, registered with the cancel in force until dropped.
pub(super) struct Registration {
    cancel: Option<Cancel>,
    pgid: u32,
}

pub(super) fn register(pgid: u32, command: &str) -> Registration {
    let cancel = CURRENT
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone();
    if let Some(cancel) = &cancel {
        cancel
            .0
            .running
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push((pgid, command.to_string()));
        // Cancelled between the check and the spawn: it must not run on.
        if cancel.is_cancelled() {
            super::group::kill_group(pgid);
        }
    }
    Registration { cancel, pgid }
}

impl Registration {
    /// The run was cancelled: its result must not count.
    pub(super) fn cancelled(&self) -> bool {
        self.cancel.as_ref().is_some_and(Cancel::is_cancelled)
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        if let Some(cancel) = &self.cancel {
            cancel
                .0
                .running
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .retain(|(pgid, _)| *pgid != self.pgid);
        }
    }
}
