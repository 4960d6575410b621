//! Crash-injection points for the tests: a debug build (the tests') kills itself with SIGKILL
//! at the point `GIT_ORCHESTRATE_CRASH_AT` names, so that a test can put the repository in the
//! state a kill at that very moment leaves, or panics there where it names `panic:POINT`. A
//! release build never reads the variable.

/// Kills this process with SIGKILL when this is a debug build and `GIT_ORCHESTRATE_CRASH_AT`
/// is `point`, panics when it is `panic:POINT`; returns otherwise.
pub fn crash_point(point: &str) {
    if !cfg!(debug_assertions) {
        return;
    }
    let Ok(at) = std::env::var("GIT_ORCHESTRATE_CRASH_AT") else {
        return;
    };
    if at == point {
        let _ =
            rustix::process::kill_process(rustix::process::getpid(), rustix::process::Signal::KILL);
    } else if at.strip_prefix("panic:") == Some(point) {
        panic!("crash point {point}");
    }
}
