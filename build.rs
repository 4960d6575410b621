//! Link settings for the `git-orchestrate` program, which starts once per agent call.
//!
//! Linked as a position-independent executable, the program carries about 9,400 relative
//! relocations that the dynamic loader applies on every start, writing to some fifty pages
//! it must first copy: about a sixth of the instructions of a `get-task` (measured with
//! callgrind; docs/architecture.md, "What each call reads"). Linked at a fixed address
//! (`-no-pie`) it has none. The code is still compiled position-independent, and the shared
//! libraries it loads are still placed at random; what is given up is the random placement
//! of this program's own code, which is Rust with no `unsafe` of its own. Only the program's
//! own link changes (not tests, build scripts or procedural macros), on GNU/Linux, where the
//! C compiler driver takes `-no-pie` after the `-pie` rustc gives it.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let target = |key: &str| std::env::var(key).unwrap_or_default();
    if target("CARGO_CFG_TARGET_OS") == "linux" && target("CARGO_CFG_TARGET_ENV") == "gnu" {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
}
