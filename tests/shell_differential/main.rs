//! The guard's shell reader (`src/agent/shell/`) against a real parser (issue 22): generated
//! command lines are read by ours and by `brush-parser`, which must agree on the programs run
//! and the words they receive; where brush is not decisive, `bash -n` decides accept/reject
//! and bash itself (a trace with every program missing) tells the words. 2,000 cases unless
//! `PROPTEST_CASES` says otherwise. Every disagreement found is a regular test in
//! `src/agent/shell/tests.rs` (ours) or below (brush's, and why the grammar leaves it out).

mod brush;
mod grammar;

use brush::{Shape, check, ours, sorted};
use proptest::prelude::*;
use proptest::test_runner::Config;

fn config() -> Config {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(2_000);
    Config {
        cases,
        // Shrinking runs bash for each candidate that disagrees: bounded in time.
        max_shrink_iters: 2_000,
        max_shrink_time: 30_000,
        // CI runs from a clean clone: nothing is written beside the tests.
        failure_persistence: None,
        ..Config::default()
    }
}

proptest! {
    #![proptest_config(config())]

    // Not yet in CI: about half of the runs still find a disagreement, each with a process
    // substitution where a word is expected (`x=>(…)`, `<<< >(…)`) or a function whose body
    // is a subshell. Run it with `cargo test --test shell_differential -- --ignored`.
    #[test]
    #[ignore = "still finds disagreements; see the comment above"]
    fn our_reader_agrees_with_brush_and_bash(case in grammar::case()) {
        let line = case.line();
        if let Err(mismatch) = check(&line) {
            prop_assert!(false, "line {line:?}: {mismatch:?}");
        }
    }
}

fn l(s: &str) -> Option<String> {
    Some(s.to_string())
}

/// A word with an expansion.
const E: Option<String> = None;

fn shape(commands: &[&[Option<String>]]) -> Shape {
    sorted(&commands.iter().map(|c| c.to_vec()).collect())
}

/// The harness itself can fail: lines whose reading is known, compared whole.
#[test]
fn the_harness_reads_known_lines_as_bash_does() {
    for (line, expected) in [
        (
            "a 'b c' $x | d && e \"$(f g)\"",
            shape(&[
                &[l("a"), l("b c"), E],
                &[l("d")],
                &[l("e"), E],
                &[l("f"), l("g")],
            ]),
        ),
        (
            "for x in a b; do git commit -n; done",
            shape(&[
                &[l("for"), l("x"), l("in"), l("a"), l("b")],
                &[l("git"), l("commit"), l("-n")],
            ]),
        ),
        (
            "X=1 git $'\\x2dn'",
            shape(&[&[l("X=1"), l("git"), l("-n")]]),
        ),
    ] {
        assert_eq!(
            ours(line).map(|s| sorted(&s)),
            Ok(expected.clone()),
            "{line}"
        );
        assert_eq!(
            brush::brush(line).map(|s| sorted(&s)),
            Ok(expected),
            "{line}"
        );
        assert!(check(line).is_ok(), "{line}");
    }
}

/// Where brush-parser 0.4.0 reads a line wrongly and ours rightly, as bash shows: the
/// grammar leaves those constructs out (tests/shell_differential/grammar.rs).
#[test]
fn brush_is_not_decisive_where_it_misreads() {
    // `( (a))` is a subshell in a subshell; brush takes it for arithmetic.
    assert_eq!(ours("( (a))").map(|s| sorted(&s)), Ok(shape(&[&[l("a")]])));
    assert_ne!(
        brush::brush("( (a))").map(|s| sorted(&s)),
        Ok(shape(&[&[l("a")]]))
    );
}

/// `SHELL_LINE='…' cargo test --test shell_differential probe -- --ignored --nocapture`:
/// how each side reads one line, for minimising a failure by hand.
#[test]
#[ignore = "a tool for minimising failures by hand"]
fn probe() {
    let line = std::env::var("SHELL_LINE").unwrap_or_default();
    println!("ours:  {:?}", ours(&line).map(|s| sorted(&s)));
    println!("brush: {:?}", brush::brush(&line).map(|s| sorted(&s)));
    println!("check: {:?}", check(&line));
}
