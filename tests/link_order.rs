//! The program's hot functions sit together at the start of its code (link/README.md): the
//! names of link/hot-symbols.txt that the program has lie in the lowest addresses of its
//! text, not spread over it, wherever build.rs hands the order to the linker.

use std::collections::HashSet;
use std::process::Command;

#[test]
fn the_hot_functions_are_linked_first() {
    if option_env!("GIT_ORCHESTRATE_HOT_ORDER").is_none() {
        // build.rs found another linker than rustc's lld here: nothing was ordered.
        return;
    }
    let listed: HashSet<String> =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/link/hot-symbols.txt"))
            .expect("link/hot-symbols.txt")
            .lines()
            .map(str::to_owned)
            .collect();
    let out = Command::new("nm")
        .args(["-n", env!("CARGO_BIN_EXE_git-orchestrate")])
        .output()
        .expect("nm (binutils) lists the program's symbols");
    assert!(
        out.status.success(),
        "nm: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| {
            let mut words = line.split_whitespace();
            let (_, kind, name) = (words.next()?, words.next()?, words.next()?);
            matches!(kind, "t" | "T").then(|| name.to_owned())
        })
        .collect();
    let hot: Vec<usize> = (0..text.len())
        .filter(|&at| listed.contains(&text[at]))
        .collect();
    // Even a debug build has std's (std is built once, with the same names).
    assert!(
        hot.len() >= 50,
        "only {} listed names in the program",
        hot.len()
    );
    let last = *hot.last().expect("some");
    // Up to the last hot one, the text is mostly hot ones (the rest are aliases of the same
    // code); unordered, the hot ones are spread over the whole text, one name in dozens.
    assert!(
        hot.len() * 2 > last + 1,
        "{} listed functions spread over the first {} of {} text symbols",
        hot.len(),
        last + 1,
        text.len()
    );
}
