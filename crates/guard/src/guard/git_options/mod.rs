//! git's options, per subcommand, as the guard needs them: which take a value (so the word after them is not a subcommand word, a path or another option), which skip the hooks, and which make git write a file. Checked against the installed git's `git <cmd> -h` by the tests below.

mod opt;

use Takes::{Nothing as N, OptionalValue as O, Value as V};
use opt::Opt;
pub use opt::Takes;

/// How option `word` of `git <sub>` reads: `Some(Takes)` when the table knows it (long
/// options may be given abbreviated as git allows, unambiguous prefixes of a long option of
/// that subcommand, only when the prefix is at least 3 chars after `--`; `--opt=value` is
/// Value/attached). For short clusters (`-am`) use `short(sub, c)`.
///
/// `--no-<opt>` and `--<opt>` for a listed `--no-<opt>` read as `Nothing`; `--opt=value`
/// answers `Value` when the option takes one (the value is in the word, so the next word is
/// not it) and `None` when it takes none, as git refuses it.
pub fn long(sub: &str, word: &str) -> Option<Takes> {
    let body = word.strip_prefix("--")?;
    match body.split_once('=') {
        Some((typed, _)) => match resolve(sub, typed)?.takes {
            N => None,
            V | O => Some(V),
        },
        None => resolve(sub, body).map(|found| found.takes),
    }
}

/// The full name of the long option `name` (typed without `--`; `=value` is ignored) of
/// `git <sub>`: `no-verify` for `no-veri`, `output` for `output`. `--` before it gives the
/// spelling `hook_bypass` and `writes_file` use. `None` for unknown or ambiguous names and for
/// negations (`no-output` writes nothing).
pub fn expand_long(sub: &str, name: &str) -> Option<&'static str> {
    let typed = name.split_once('=').map_or(name, |(typed, _)| typed);
    resolve(sub, typed)
        .filter(|found| !found.negated)
        .map(|found| found.name)
}

/// How the letter `c` of `git <sub>` reads, alone (`-m`) or in a cluster (`-am`): git gives
/// the rest of the cluster to the first letter that takes a value, or the next word when that
/// letter ends the cluster (`Value` only).
pub fn short(sub: &str, c: char) -> Option<Takes> {
    options(sub).find(|o| o.0 == Some(c)).map(|o| o.2)
}

/// git's global options (before the subcommand): `-C`, `-c`, `--git-dir`, `--work-tree`,
/// `--namespace`, `--exec-path` (=value only, alone it prints), `--config-env`,
/// `--super-prefix`, `--list-cmds`, `--attr-source`… — same `Takes` answer.
///
/// Exact words only: git.c compares them whole, so it takes no abbreviation, and no cluster or
/// attached value for `-C`/`-c` (`-Cdir` is an unknown option to it).
pub fn global(word: &str) -> Option<Takes> {
    if let Some(body) = word.strip_prefix("--") {
        let named = |name: &str| GLOBAL.iter().find(|o| !o.1.is_empty() && o.1 == name);
        return match body.split_once('=') {
            Some((name, _)) => named(name).filter(|o| o.2 != N).map(|_| V),
            None => named(body).map(|o| o.2),
        };
    }
    let mut letters = word.strip_prefix('-')?.chars();
    let c = letters.next()?;
    if letters.next().is_some() {
        return None;
    }
    GLOBAL.iter().find(|o| o.0 == Some(c)).map(|o| o.2)
}

/// Options of `git <sub>` that skip hooks (`commit -n/--no-verify`,
/// `merge/pull/push/am/rebase --no-verify` — only where git has them), as (short letter if
/// any, long name as typed: `--no-verify`). Each is in the table under its own name, so
/// `expand_long` gives it back for any abbreviation git takes.
///
/// cherry-pick and revert have none because they never run pre-commit or commit-msg: the
/// sequencer commits with `-n` unless it is editing the message.
pub fn hook_bypass(sub: &str) -> &'static [(Option<char>, &'static str)] {
    match sub {
        // post-rewrite is the hook that sees `--amend`.
        "commit" => &[(Some('n'), "--no-verify"), (None, "--no-post-rewrite")],
        // Since git 2.40; older gits refuse the option, so blocking it costs nothing.
        "am" => &[(Some('n'), "--no-verify")],
        "merge" | "pull" | "push" | "rebase" => &[(None, "--no-verify")],
        _ => &[],
    }
}

/// Options that make git write the file or directory named by their value, as typed (`-o`,
/// `--output`); `bundle create` and `worktree add` name theirs positionally, so they are not
/// here.
pub fn writes_file(sub: &str) -> &'static [&'static str] {
    match sub {
        // The diff machinery's `--output`, which every command showing a diff parses.
        "diff" | "log" | "show" | "reflog" | "stash" | "whatchanged" | "diff-tree"
        | "diff-files" | "diff-index" => &["--output"],
        "format-patch" => &["-o", "--output-directory", "--output"],
        "archive" => &["-o", "--output"],
        // Written when setting, read otherwise; the guard cannot tell which without the rest.
        "config" => &["-f", "--file"],
        "fast-import" => &["--export-marks", "--export-pack-edges"],
        "clone" => &["--separate-git-dir"],
        // `--directory` roots every path of the patch there; `--build-fake-ancestor` writes
        // an index file.
        "apply" => &["--directory", "--build-fake-ancestor"],
        "am" => &["--directory"],
        _ => &[],
    }
}

/// git pads an option's spec to this column and starts its description there, on the same
/// line when the spec leaves room, else on the next.
// Only the tests read git's help; the guard reads the table.
#[cfg_attr(not(test), allow(dead_code))]
const DESCRIPTION_COLUMN: usize = 26;

/// Parse the text of `git <sub> -h` into the options it lists with what they take. git prints
/// lines like `    -m, --[no-]message <message>`, `    -u, --[no-]untracked-files[=<mode>]`,
/// `    --[no-]verify`, `    -S, --[no-]gpg-sign[=<key-id>]`, `    -C <path>`; a `<…>` after a
/// space means Value, `[=<…>]` means OptionalValue. Returns (short, long, Takes).
///
/// Long names come without `--` and `[no-]`. `-NUM` and the dashless `(`/`)` of grep are left
/// out: they are no letter.
#[cfg_attr(not(test), allow(dead_code))]
pub fn parse_help(text: &str) -> Vec<(Option<char>, Option<String>, Takes)> {
    text.lines().filter_map(parse_option_line).collect()
}

#[cfg_attr(not(test), allow(dead_code))]
fn parse_option_line(line: &str) -> Option<(Option<char>, Option<String>, Takes)> {
    // Four spaces and a dash: usage lines, group headings and wrapped descriptions start
    // otherwise.
    let mut rest = line.strip_prefix("    ")?;
    if !rest.starts_with('-') {
        return None;
    }
    let mut short = None;
    if !rest.starts_with("--") {
        let mut letters = rest[1..].chars();
        let c = letters.next()?;
        let after = letters.as_str();
        if !(after.is_empty() || after.starts_with([' ', ',', '['])) {
            return None;
        }
        // git 2.39 lists `reflog expire --single-worktree` with the short name 1, printed
        // raw: `-\x01, --single-worktree`.
        short = c.is_ascii_graphic().then_some(c);
        rest = after.strip_prefix(", ").unwrap_or(after);
    }
    let mut long = None;
    if let Some(spec) = rest.strip_prefix("--") {
        let spec = spec.strip_prefix("[no-]").unwrap_or(spec);
        let end = spec.find([' ', '[', '=']).unwrap_or(spec.len());
        if end == 0 {
            return None;
        }
        long = Some(spec[..end].to_string());
        rest = &spec[end..];
    } else if short.is_none() {
        return None;
    }
    let takes = if rest.starts_with('[') {
        O
    } else if rest.starts_with('=') {
        V
    } else if let Some(after) = rest.strip_prefix(' ') {
        // A value's placeholder follows the option after one space. So does the description
        // when the spec ends one column short of it (git's `pad = -1`), as in
        // `    --ignore-space-at-eol ignore changes…`; a placeholder is told apart by its `<`,
        // or, when git prints it literally (`--empty (stop|drop|keep)`), by not starting at
        // the description's column.
        let column = line.chars().count() - after.chars().count();
        if after.is_empty() || after.starts_with(' ') {
            N
        } else if after.starts_with('<') || column != DESCRIPTION_COLUMN {
            V
        } else {
            N
        }
    } else {
        N
    };
    Some((short, long, takes))
}

/// git takes any unambiguous prefix, even `--re` for `--ref`: the guard reads what git reads.
const MIN_ABBREVIATION: usize = 1;

struct Found {
    name: &'static str,
    negated: bool,
    takes: Takes,
}

impl Found {
    /// What the option does, as (name without `no-`, whether it is turned off): git reads
    /// `--no-verify`, and `--verify` as the option `no-verify` negated, and `--no-quiet` all
    /// the same way.
    fn meaning(&self) -> (&'static str, bool) {
        match self.name.strip_prefix("no-") {
            Some(base) => (base, !self.negated),
            None => (self.name, self.negated),
        }
    }
}

fn options(sub: &str) -> impl Iterator<Item = &'static Opt> {
    sections(sub).iter().flat_map(|section| section.iter())
}

/// The option `typed` (a long option without `--` and `=value`) names, as git's
/// parse-options finds it: exactly, negated, or as an unambiguous prefix of either.
fn resolve(sub: &str, typed: &str) -> Option<Found> {
    if typed.is_empty() {
        return None;
    }
    let exact = |name: &str| options(sub).find(|o| !o.1.is_empty() && o.1 == name);
    if let Some(o) = exact(typed) {
        return Some(Found {
            name: o.1,
            negated: false,
            takes: o.2,
        });
    }
    // Any option may be negated; git refuses it for the few marked NONEG, and then the
    // command fails before it does anything.
    if let Some(o) = typed.strip_prefix("no-").and_then(exact) {
        return Some(Found {
            name: o.1,
            negated: true,
            takes: N,
        });
    }
    // `--verify` undoes a listed `--no-verify` even where git does not list it (2.39).
    if let Some(o) = options(sub).find(|o| o.1.strip_prefix("no-") == Some(typed)) {
        return Some(Found {
            name: o.1,
            negated: true,
            takes: N,
        });
    }
    if typed.len() < MIN_ABBREVIATION {
        return None;
    }
    let mut found: Option<Found> = None;
    for o in options(sub).filter(|o| !o.1.is_empty()) {
        let readings = [
            o.1.starts_with(typed).then_some((false, o.2)),
            typed
                .strip_prefix("no-")
                .filter(|rest| !rest.is_empty() && o.1.starts_with(rest))
                .map(|_| (true, N)),
            o.1.strip_prefix("no-")
                .filter(|rest| rest.starts_with(typed))
                .map(|_| (true, N)),
        ];
        for (negated, takes) in readings.into_iter().flatten() {
            let reading = Found {
                name: o.1,
                negated,
                takes,
            };
            match &found {
                // One option reached twice: listed by two sections (`--abbrev` by the diff
                // and the revision options), or as `--no-verify` and its `--verify` negated.
                // The reading that spells it without negating wins.
                Some(f) if f.meaning() == reading.meaning() => {
                    if f.negated && !negated {
                        found = Some(reading);
                    }
                }
                Some(_) => return None,
                None => found = Some(reading),
            }
        }
    }
    found
}

/// The tables `git <sub>` reads its options from, first match winning: a command's own
/// options shadow the diff and revision options it passes on (`format-patch -n` is
/// `--numbered`, not `--max-count`).
fn sections(sub: &str) -> &'static [&'static [Opt]] {
    match sub {
        "add" => &[ADD],
        "am" => &[AM],
        "apply" => &[APPLY],
        "archive" => &[ARCHIVE, NUMBERS],
        "bisect" => &[BISECT],
        "blame" => &[BLAME, REV],
        "branch" => &[BRANCH],
        "checkout" => &[CHECKOUT],
        "cherry-pick" => &[CHERRY_PICK, REV],
        "clean" => &[CLEAN],
        "clone" => &[CLONE],
        "commit" => &[COMMIT],
        "config" => &[CONFIG],
        "diff" => &[DIFF, DIFF_CMD],
        "diff-files" | "diff-index" => &[DIFF, DIFF_CMD],
        "diff-tree" => &[DIFF, DIFF_CMD, REV],
        "fast-import" => &[FAST_IMPORT],
        "fetch" => &[FETCH],
        "format-patch" => &[FORMAT_PATCH, DIFF, REV, NUMBERS],
        "gc" => &[GC],
        "grep" => &[GREP, NUMBERS],
        "log" | "show" => &[LOG, DIFF, REV, NUMBERS],
        "merge" => &[MERGE],
        "mv" => &[MV],
        "notes" => &[NOTES],
        "pull" => &[PULL],
        "push" => &[PUSH],
        "rebase" => &[REBASE],
        "reflog" => &[REFLOG, LOG, DIFF, REV, NUMBERS],
        "remote" => &[REMOTE],
        "replace" => &[REPLACE],
        "reset" => &[RESET],
        "restore" => &[RESTORE],
        "revert" => &[REVERT, REV],
        "rm" => &[RM],
        "stash" => &[STASH, DIFF, REV, NUMBERS],
        "status" => &[STATUS],
        "submodule" => &[SUBMODULE],
        "switch" => &[SWITCH],
        "symbolic-ref" => &[SYMBOLIC_REF],
        "tag" => &[TAG],
        "update-ref" => &[UPDATE_REF],
        "whatchanged" => &[LOG, DIFF, REV, NUMBERS],
        "worktree" => &[WORKTREE],
        _ => &[],
    }
}

mod hand;
mod history;
mod table;
use hand::*;
use history::*;
use table::*;

#[cfg(test)]
mod tests;
