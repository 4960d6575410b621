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
//! The functions a call runs are placed together at the start of the program's code, in the
//! order link/hot-symbols.txt gives (lld's `--symbol-ordering-file`): spread over 11.8 MB,
//! they took 94 page faults a passing `submit-work`, some 1.4 µs each here (link/README.md).
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
    if let Some(order) = hot_symbols_first() {
        // tests/link_order.rs checks the program it links only when this is set.
        println!("cargo:rustc-env=GIT_ORCHESTRATE_HOT_ORDER=1");
        println!(
            "cargo:rustc-link-arg-bins=-Wl,--symbol-ordering-file={}",
            order.display()
        );
        // Names this build does not have (another compiler or dependency version renames
        // them) are skipped: the order is a speed hint, never a condition of the link.
        println!("cargo:rustc-link-arg-bins=-Wl,--no-warn-symbol-ordering");
    }
}

/// link/hot-symbols.txt (link/README.md), where rustc links with its own lld, which alone
/// takes a symbol order: x86_64 GNU/Linux from Rust 1.90 on, with no linker and no link
/// settings of the builder's own (GNU ld would refuse the option and fail the build).
fn hot_symbols_first() -> Option<PathBuf> {
    println!("cargo:rerun-if-changed=link/hot-symbols.txt");
    println!("cargo:rerun-if-env-changed=RUSTFLAGS");
    let var = |key: &str| std::env::var(key).unwrap_or_default();
    if var("TARGET") != "x86_64-unknown-linux-gnu" || std::env::var_os("RUSTC_LINKER").is_some() {
        return None;
    }
    // -C linker, linker-flavor, linker-features, link-self-contained, link-arg(s): any of
    // them may mean another linker.
    if var("CARGO_ENCODED_RUSTFLAGS").contains("link") {
        return None;
    }
    let version = Command::new(std::env::var_os("RUSTC")?)
        .arg("--version")
        .output()
        .ok()?;
    let minor: u32 = String::from_utf8(version.stdout)
        .ok()?
        .split_whitespace()
        .nth(1)?
        .strip_prefix("1.")?
        .split('.')
        .next()?
        .parse()
        .ok()?;
    if minor < 90 {
        return None;
    }
    let order = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR")?).join("link/hot-symbols.txt");
    order.is_file().then_some(order)
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
