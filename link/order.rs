//! Where link/hot-symbols.txt's names lie in a built program, as `nm -n` lists it: shared by
//! tests/link_order.rs, which asserts the order took effect, and the bench, which prints it.

use std::collections::HashSet;
use std::path::Path;
use std::process::Command;

/// How the listed names lie in one program's text.
pub struct Placement {
    /// How many names the list holds, both builds' (link/README.md).
    pub listed: usize,
    /// The positions, in address order among the text symbols, of the listed names this
    /// program has.
    pub hot: Vec<usize>,
    /// How many text symbols the program has.
    pub text: usize,
}

/// Reads the list and `nm -n PROGRAM`; an error says which of the two failed.
pub fn placement(program: &Path) -> Result<Placement, String> {
    let file = concat!(env!("CARGO_MANIFEST_DIR"), "/link/hot-symbols.txt");
    let listed: HashSet<String> = std::fs::read_to_string(file)
        .map_err(|e| format!("{file}: {e}"))?
        .lines()
        .map(str::to_owned)
        .collect();
    let out = Command::new("nm")
        .arg("-n")
        .arg(program)
        .output()
        .map_err(|e| format!("nm (binutils): {e}"))?;
    if !out.status.success() {
        return Err(format!("nm: {}", String::from_utf8_lossy(&out.stderr)));
    }
    let text: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| {
            let mut words = line.split_whitespace();
            let (_, kind, name) = (words.next()?, words.next()?, words.next()?);
            matches!(kind, "t" | "T").then(|| name.to_owned())
        })
        .collect();
    let hot = (0..text.len())
        .filter(|&at| listed.contains(&text[at]))
        .collect();
    Ok(Placement {
        listed: listed.len(),
        hot,
        text: text.len(),
    })
}
