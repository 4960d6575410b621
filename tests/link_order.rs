//! The program's hot functions sit together at the start of its code (link/README.md): the
//! names of link/hot-symbols.txt that the program has lie in the lowest addresses of its
//! text, not spread over it, wherever build.rs hands the order to the linker.

use std::path::Path;

#[path = "../link/order.rs"]
mod order;

#[test]
fn the_hot_functions_are_linked_first() {
    if option_env!("GIT_ORCHESTRATE_HOT_ORDER").is_none() {
        // build.rs found another linker than rustc's lld here: nothing was ordered.
        return;
    }
    let placement = order::placement(Path::new(env!("CARGO_BIN_EXE_git-orchestrate")))
        .unwrap_or_else(|e| panic!("{e}"));
    let hot = placement.hot;
    // Even a debug build has std's (std is built once, with the same names).
    assert!(
        hot.len() >= 50,
        "only {} of the {} listed names in the program",
        hot.len(),
        placement.listed
    );
    let last = *hot.last().expect("some");
    // Up to the last hot one, the text is mostly hot ones (the rest are aliases of the same
    // code); unordered, the hot ones are spread over the whole text, one name in dozens.
    assert!(
        hot.len() * 2 > last + 1,
        "{} listed functions spread over the first {} of {} text symbols",
        hot.len(),
        last + 1,
        placement.text
    );
}
