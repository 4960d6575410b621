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
//!
//! The unwinder is linked in statically, not loaded from `libgcc_s.so.1`: Rust's standard
//! library asks the linker for `-lgcc_s`, and a linker script of that name in a directory of
//! our own (`INPUT(-lgcc_eh -lgcc)`, found before the C compiler's) gives it gcc's static
//! unwinder instead, as `gcc -static-libgcc` does. One shared library fewer to load and
//! relocate on every start, and no `libgcc_s` constructor, which asks the CPU what it
//! supports (`cpuid`) several times: each such question costs a trip to the hypervisor in a
//! virtual machine (6 µs here), about 45 µs a start in all (docs/architecture.md,
//! "Performance"). Left as it was where the C compiler has no `libgcc_eh.a` or another linker
//! is configured.

use std::path::PathBuf;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=RUSTC_LINKER");
    let target = |key: &str| std::env::var(key).unwrap_or_default();
    if target("CARGO_CFG_TARGET_OS") == "linux" && target("CARGO_CFG_TARGET_ENV") == "gnu" {
        println!("cargo:rustc-link-arg-bins=-no-pie");
        if let Some(dir) = static_unwinder() {
            println!("cargo:rustc-link-arg-bins=-L{}", dir.display());
        }
    }
}

/// A directory holding `libgcc_s.so`, a linker script naming gcc's static unwinder, when the
/// C compiler rustc links with (`cc`, unless a linker is configured) has one.
fn static_unwinder() -> Option<PathBuf> {
    if std::env::var_os("RUSTC_LINKER").is_some() {
        return None;
    }
    let found = |name: &str| -> Option<PathBuf> {
        let out = Command::new("cc")
            .arg(format!("-print-file-name={name}"))
            .output()
            .ok()?;
        let path = PathBuf::from(String::from_utf8(out.stdout).ok()?.trim());
        (out.status.success() && path.is_absolute() && path.is_file()).then_some(path)
    };
    found("libgcc_eh.a")?;
    found("libgcc.a")?;
    let dir = PathBuf::from(std::env::var_os("OUT_DIR")?).join("static-unwinder");
    std::fs::create_dir_all(&dir).ok()?;
    std::fs::write(
        dir.join("libgcc_s.so"),
        "/* git-orchestrate's build.rs: gcc's static unwinder for Rust's -lgcc_s */\nINPUT(-lgcc_eh -lgcc)\n",
    )
    .ok()?;
    Some(dir)
}
