//! The live line: at a terminal, while a command runs tests or gates, one line on stderr
//! names what runs and for how long, and is cleared when it ends. Nothing when stderr is not
//! a terminal (an agent, a pipe, CI), so no output anyone parses changes.

use std::io::{IsTerminal as _, Write as _};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::exec::Cancel;

/// How often the line is redrawn.
const EVERY: Duration = Duration::from_millis(500);
/// A call shorter than this shows nothing.
const QUIET_FOR: Duration = Duration::from_secs(1);

/// Runs `f`, with the live line on stderr while it runs when stderr is a terminal.
pub fn while_running<T>(f: impl FnOnce() -> T) -> T {
    if !std::io::stderr().is_terminal() {
        return f();
    }
    // A cancel that is never cancelled: its registry says what runs now.
    let cancel = Cancel::new();
    let (done, finished) = mpsc::channel::<()>();
    let watched = cancel.clone();
    let ticker = std::thread::spawn(move || {
        let started = Instant::now();
        let mut shown = false;
        // Until the call is done (its sender dropped): a timeout is only the next tick.
        while let Err(mpsc::RecvTimeoutError::Timeout) = finished.recv_timeout(EVERY) {
            let running = watched.running();
            if started.elapsed() < QUIET_FOR || running.is_empty() {
                continue;
            }
            let line = line(&running, started.elapsed());
            let _ = write!(std::io::stderr(), "\r\x1b[K{line}");
            shown = true;
        }
        if shown {
            let _ = write!(std::io::stderr(), "\r\x1b[K");
        }
    });
    let result = cancel.scope(f);
    drop(done);
    let _ = ticker.join();
    result
}

/// The line for `running` commands after `elapsed`: the first command's first line, cut to
/// fit a narrow terminal.
fn line(running: &[String], elapsed: Duration) -> String {
    let first = running
        .first()
        .map(|c| c.lines().next().unwrap_or_default())
        .unwrap_or_default();
    let shown: String = first.chars().take(50).collect();
    let cut = if shown.len() < first.len() { "…" } else { "" };
    let more = match running.len() {
        0 | 1 => String::new(),
        n => format!(" and {} more", n - 1),
    };
    format!("running `{shown}{cut}`{more} ({} s)", elapsed.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_names_what_runs_and_for_how_long() {
        assert_eq!(
            line(&["cargo test".into()], Duration::from_millis(3400)),
            "running `cargo test` (3 s)"
        );
        assert_eq!(
            line(
                &["a\nb".into(), "lint".into(), "fmt".into()],
                Duration::from_secs(12)
            ),
            "running `a` and 2 more (12 s)"
        );
        let long = "x".repeat(80);
        assert_eq!(
            line(&[long], Duration::from_secs(1)),
            format!("running `{}…` (1 s)", "x".repeat(50))
        );
    }
}
