//! Named points where a test stops the program to kill it there (tests/cli/landing.rs): with
//! `GIT_ORCHESTRATE_PAUSE_AT` naming the point, the process writes its pid to
//! `GIT_ORCHESTRATE_PAUSE_FILE` and waits to be killed, or to be let go (the test removes
//! the file, having changed the world meanwhile: filled the disk); otherwise a point does
//! nothing.

/// Stops here when the environment names `point`: a test kills the process with SIGKILL at
/// exactly this place, with no timing involved, or removes the file to let it go on.
pub fn point(point: &str) {
    if std::env::var_os("GIT_ORCHESTRATE_PAUSE_AT").is_none_or(|at| at != point) {
        return;
    }
    let Some(file) = std::env::var_os("GIT_ORCHESTRATE_PAUSE_FILE") else {
        return;
    };
    // Aside, then renamed: the test reads a whole pid or none.
    let path = std::path::PathBuf::from(file);
    let partial = path.with_extension("partial");
    if std::fs::write(&partial, std::process::id().to_string()).is_err()
        || std::fs::rename(&partial, &path).is_err()
    {
        return;
    }
    while path.exists() {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}
