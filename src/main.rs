//! The `git-orchestrate` binary (run as `git orchestrate`): everything lives in the library.
//! It is its own entry point (`no_main`): Rust's start-up, for the main thread's stack-overflow
//! guard, asks glibc for the thread's stack (`pthread_getattr_np`), which parses
//! `/proc/self/maps` with `sscanf`: some 100,000 instructions, 6 % of a `get-task`
//! (benches/orchestrate.rs, `GIT_ORCHESTRATE_BENCH=instructions`). What else that start-up
//! does is done here: SIGPIPE ignored, the standard descriptors kept open, a panic caught,
//! standard output flushed at exit. What is not: a stack overflow ends the process with
//! SIGSEGV, without std's message, and a panic's message names the thread `<unnamed>`.
// Built as a test harness (`cargo test` runs this crate's unit tests, of which it has none),
// the harness's own `main` is the program's.
#![cfg_attr(not(test), no_main)]

#[cfg(not(test))]
#[unsafe(no_mangle)]
extern "C" fn main(
    _argc: std::ffi::c_int,
    _argv: *const *const std::ffi::c_char,
) -> std::ffi::c_int {
    // A write to a pipe whose reader is gone (a child's stdin, `| head`) must fail with
    // EPIPE, which the commands handle, not end the process; children get the default back
    // (std's `Command` resets it in each).
    // SAFETY: called first, before any other thread exists; SIG_IGN installs no handler.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
    }
    git_orchestrate::cli::keep_standard_descriptors();
    // A panic must not unwind out of an `extern "C"` function (that aborts): it is reported
    // by the panic hook, as std's start-up would, and exits 101.
    let status = std::panic::catch_unwind(|| {
        // The tests' panic at start (`GIT_ORCHESTRATE_CRASH_AT=panic:start`, debug builds
        // only): what unwinds it is linked in by build.rs, not loaded from libgcc_s.
        git_orchestrate::crash::crash_point("start");
        git_orchestrate::cli::main()
    })
    .unwrap_or(101);
    // `exit` flushes standard output first, as returning from a Rust `main` does.
    std::process::exit(std::ffi::c_int::from(status))
}
