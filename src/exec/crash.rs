//! Crash-injection points for the tests: a debug build (the tests') kills itself with SIGKILL
//! at the point `GIT_ORCHESTRATE_CRASH_AT` names, so that a test can put the repository in the
//! state a kill at that very moment leaves. A release build never reads the variable.

/// Kills this process with SIGKILL when this is a debug build and `GIT_ORCHESTRATE_CRASH_AT`
/// is `point`; returns otherwise.
pub fn crash_point(point: &str) {
    if cfg!(debug_assertions)
        && std::env::var("GIT_ORCHESTRATE_CRASH_AT").is_ok_and(|at| at == point)
    {
        let _ =
            rustix::process::kill_process(rustix::process::getpid(), rustix::process::Signal::KILL);
    }
}
