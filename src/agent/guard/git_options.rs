//! git's options, per subcommand, as the guard needs them: which take a value (so the word after them is not a subcommand word, a path or another option), which skip the hooks, and which make git write a file. Checked against the installed git's `git <cmd> -h` by the tests below.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Takes {
    Nothing,
    Value,
    /// attached only: `-uno`, `--untracked-files=no`
    OptionalValue,
}

use Takes::{Nothing as N, OptionalValue as O, Value as V};

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

/// (short letter, long name without `--`, what it takes); `""` for a short-only option.
type Opt = (Option<char>, &'static str, Takes);

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

const GLOBAL: &[Opt] = &[
    (None, "attr-source", V),
    (None, "bare", N),
    (None, "config-env", V),
    (None, "exec-path", O),
    (None, "git-dir", V),
    (None, "glob-pathspecs", N),
    (Some('h'), "help", N),
    (None, "html-path", N),
    (None, "icase-pathspecs", N),
    (None, "info-path", N),
    // `=` only; alone git calls it an unknown option.
    (None, "list-cmds", O),
    (None, "literal-pathspecs", N),
    (None, "man-path", N),
    (None, "namespace", V),
    (None, "no-advice", N),
    (None, "no-lazy-fetch", N),
    (None, "no-literal-pathspecs", N),
    (None, "no-optional-locks", N),
    (Some('P'), "no-pager", N),
    (None, "no-replace-objects", N),
    (None, "noglob-pathspecs", N),
    (Some('p'), "paginate", N),
    (None, "shallow-file", V),
    // Gone from the global options since git 2.40; older gits take it.
    (None, "super-prefix", V),
    (Some('v'), "version", N),
    (None, "work-tree", V),
    (Some('C'), "", V),
    (Some('c'), "", V),
];

/// `-<n>`: a count (`log -3`), a context size (`grep -3`) or a level (`archive -9`), always in
/// the word itself.
const NUMBERS: &[Opt] = &[
    (Some('0'), "", N),
    (Some('1'), "", N),
    (Some('2'), "", N),
    (Some('3'), "", N),
    (Some('4'), "", N),
    (Some('5'), "", N),
    (Some('6'), "", N),
    (Some('7'), "", N),
    (Some('8'), "", N),
    (Some('9'), "", N),
];

/// The revision walk's options (revision.c, diff-merges.c), which log, show, format-patch,
/// blame, stash, reflog, cherry-pick and revert pass on. git parses them by hand, so `-h`
/// lists none; those spelled `--opt=value` only (`--format=`) are `O`, the word after them
/// never being theirs.
const REV: &[Opt] = &[
    (None, "after", V),
    (None, "all", N),
    (None, "all-match", N),
    (None, "alternate-refs", N),
    (None, "ancestry-path", O),
    (None, "author", V),
    (None, "author-date-order", N),
    (None, "basic-regexp", N),
    (None, "before", V),
    (None, "bisect", N),
    (None, "boundary", N),
    (None, "branches", O),
    (None, "cc", N),
    (None, "cherry", N),
    (None, "cherry-mark", N),
    (None, "cherry-pick", N),
    (None, "children", N),
    (None, "combined-all-paths", N),
    (None, "committer", V),
    (None, "date", V),
    (None, "date-order", N),
    (None, "dd", N),
    (None, "default", V),
    (None, "dense", N),
    (None, "diff-merges", V),
    (None, "do-walk", N),
    (None, "early-output", O),
    (None, "encoding", V),
    (None, "end-of-options", N),
    (None, "exclude", V),
    (None, "exclude-first-parent-only", N),
    (None, "exclude-hidden", O),
    (None, "expand-tabs", O),
    (Some('E'), "extended-regexp", N),
    (None, "first-parent", N),
    (Some('F'), "fixed-strings", N),
    (None, "format", O),
    (None, "full-diff", N),
    (None, "full-history", N),
    (None, "glob", V),
    (None, "graph", N),
    (None, "grep", V),
    (None, "grep-reflog", V),
    (None, "ignore-missing", N),
    (None, "in-commit-order", N),
    (None, "indexed-objects", N),
    (None, "invert-grep", N),
    (None, "left-only", N),
    (None, "left-right", N),
    (None, "log-size", N),
    (None, "max-age", V),
    (Some('n'), "max-count", V),
    (None, "max-parents", O),
    (None, "merge", N),
    (None, "merges", N),
    (None, "min-age", V),
    (None, "min-parents", O),
    (None, "no-merges", N),
    (None, "no-walk", O),
    (None, "not", N),
    (None, "notes", O),
    (None, "oneline", N),
    (None, "parents", N),
    (Some('P'), "perl-regexp", N),
    (None, "pretty", O),
    (None, "reflog", N),
    (Some('i'), "regexp-ignore-case", N),
    (None, "relative-date", N),
    (None, "remerge-diff", N),
    (None, "remotes", O),
    (None, "remove-empty", N),
    (None, "reverse", N),
    (None, "right-only", N),
    (None, "show-linear-break", O),
    (None, "show-notes", O),
    (None, "show-notes-by-default", N),
    (None, "show-pulls", N),
    (None, "show-signature", N),
    (None, "simplify-by-decoration", N),
    (None, "simplify-merges", N),
    (None, "since", V),
    (None, "since-as-filter", V),
    (None, "single-worktree", N),
    (None, "skip", V),
    (None, "sparse", N),
    (None, "standard-notes", N),
    (None, "stdin", N),
    (None, "tags", O),
    (None, "topo-order", N),
    (None, "until", V),
    (Some('g'), "walk-reflogs", N),
    (Some('c'), "", N),
    (Some('m'), "", N),
    (Some('r'), "", N),
    (Some('t'), "", N),
    (Some('v'), "", N),
];

/// The words of `git diff` and the diff plumbing that its `-h` (the diff options) leaves
/// out.
const DIFF_CMD: &[Opt] = &[
    (Some('1'), "base", N),
    (None, "cached", N),
    (None, "cc", N),
    (None, "merge-base", N),
    (None, "no-commit-id", N),
    (None, "no-index", N),
    (Some('2'), "ours", N),
    (None, "root", N),
    (None, "staged", N),
    (Some('3'), "theirs", N),
    (Some('0'), "", N),
    (Some('c'), "", N),
];

/// `git fast-import` reads `--opt=value` only, and its `-h` prints the usage line alone.
const FAST_IMPORT: &[Opt] = &[
    (None, "active-branches", O),
    (None, "allow-unsafe-features", N),
    (None, "big-file-threshold", O),
    (None, "cat-blob-fd", O),
    (None, "date-format", O),
    (None, "depth", O),
    (None, "done", N),
    (None, "export-marks", O),
    (None, "export-pack-edges", O),
    (None, "force", N),
    (None, "import-marks", O),
    (None, "import-marks-if-exists", O),
    (None, "max-pack-size", O),
    (None, "no-relative-marks", N),
    (None, "quiet", N),
    (None, "relative-marks", N),
    (None, "rewrite-submodules-from", O),
    (None, "rewrite-submodules-to", O),
    (None, "stats", N),
];

/// `git bisect start`'s options, parsed by hand. `bisect terms --term-good` takes no value,
/// but nothing follows it there.
const BISECT: &[Opt] = &[
    (None, "first-parent", N),
    (None, "no-checkout", N),
    (None, "term-bad", V),
    (None, "term-good", V),
    (None, "term-new", V),
    (None, "term-old", V),
];

// The tables below come from `git <cmd> -h` and `--help-all` (which adds the hidden options)
// of git 2.39 and 2.47, merged; a sub-subcommand's options (`git notes add -h`,
// `git submodule--helper update -h`) are merged into its command's. The tests re-read them
// from the installed git.

const COMMIT: &[Opt] = &[
    (None, "ahead-behind", N),
    (Some('a'), "all", N),
    (None, "amend", N),
    (None, "author", V),
    (None, "branch", N),
    (None, "cleanup", V),
    (None, "date", V),
    (None, "dry-run", N),
    (Some('e'), "edit", N),
    (Some('F'), "file", V),
    (None, "fixup", V),
    (Some('S'), "gpg-sign", O),
    (Some('i'), "include", N),
    (None, "interactive", N),
    (None, "long", N),
    (Some('m'), "message", V),
    (None, "no-post-rewrite", N),
    (Some('n'), "no-verify", N),
    (Some('z'), "null", N),
    (Some('o'), "only", N),
    (Some('p'), "patch", N),
    (None, "pathspec-file-nul", N),
    (None, "pathspec-from-file", V),
    (None, "porcelain", N),
    (None, "post-rewrite", N),
    (Some('q'), "quiet", N),
    (Some('c'), "reedit-message", V),
    (None, "reset-author", N),
    (Some('C'), "reuse-message", V),
    (None, "short", N),
    (Some('s'), "signoff", N),
    (None, "squash", V),
    (None, "status", N),
    (Some('t'), "template", V),
    (None, "trailer", V),
    (Some('u'), "untracked-files", O),
    (Some('v'), "verbose", N),
    (None, "verify", N),
];

const MERGE: &[Opt] = &[
    (None, "abort", N),
    (None, "allow-unrelated-histories", N),
    (None, "autostash", N),
    (None, "cleanup", V),
    (None, "commit", N),
    (None, "continue", N),
    (Some('e'), "edit", N),
    (None, "ff", N),
    (None, "ff-only", N),
    (Some('F'), "file", V),
    (Some('S'), "gpg-sign", O),
    (None, "into-name", V),
    (None, "log", O),
    (Some('m'), "message", V),
    (None, "no-verify", N),
    (None, "overwrite-ignore", N),
    (None, "progress", N),
    (Some('q'), "quiet", N),
    (None, "quit", N),
    (None, "rerere-autoupdate", N),
    (None, "signoff", N),
    (None, "squash", N),
    (None, "stat", N),
    (Some('s'), "strategy", V),
    (Some('X'), "strategy-option", V),
    (None, "summary", N),
    (Some('v'), "verbose", N),
    (None, "verify", N),
    (None, "verify-signatures", N),
    (Some('n'), "", N),
];

const PULL: &[Opt] = &[
    (None, "all", N),
    (None, "allow-unrelated-histories", N),
    (Some('a'), "append", N),
    (None, "autostash", N),
    (None, "cleanup", V),
    (None, "commit", N),
    (None, "deepen", V),
    (None, "depth", V),
    (None, "dry-run", N),
    (None, "edit", N),
    (None, "ff", N),
    (None, "ff-only", N),
    (Some('f'), "force", N),
    (Some('S'), "gpg-sign", O),
    (Some('4'), "ipv4", N),
    (Some('6'), "ipv6", N),
    (Some('j'), "jobs", O),
    (Some('k'), "keep", N),
    (None, "log", O),
    (None, "negotiation-tip", V),
    // git lists `--[no-]verify`; this spelling is what `hook_bypass` names.
    (None, "no-verify", N),
    (None, "progress", N),
    (Some('p'), "prune", N),
    (Some('q'), "quiet", N),
    (Some('r'), "rebase", O),
    (None, "recurse-submodules", O),
    (None, "refmap", V),
    (Some('o'), "server-option", V),
    (None, "set-upstream", N),
    (None, "shallow-exclude", V),
    (None, "shallow-since", V),
    (None, "show-forced-updates", N),
    (None, "signoff", O),
    (None, "squash", N),
    (None, "stat", N),
    (Some('s'), "strategy", V),
    (Some('X'), "strategy-option", V),
    (Some('t'), "tags", N),
    (None, "unshallow", N),
    (None, "update-shallow", N),
    (None, "upload-pack", V),
    (Some('v'), "verbose", N),
    (None, "verify", N),
    (None, "verify-signatures", N),
    (Some('n'), "", N),
];

const PUSH: &[Opt] = &[
    (None, "all", N),
    (None, "atomic", N),
    (None, "branches", N),
    (Some('d'), "delete", N),
    (Some('n'), "dry-run", N),
    (None, "exec", V),
    (None, "follow-tags", N),
    (Some('f'), "force", N),
    (None, "force-if-includes", N),
    (None, "force-with-lease", O),
    (Some('4'), "ipv4", N),
    (Some('6'), "ipv6", N),
    (None, "mirror", N),
    (None, "no-verify", N),
    (None, "porcelain", N),
    (None, "progress", N),
    (None, "prune", N),
    (Some('o'), "push-option", V),
    (Some('q'), "quiet", N),
    (None, "receive-pack", V),
    (None, "recurse-submodules", V),
    (None, "repo", V),
    (Some('u'), "set-upstream", N),
    (None, "signed", O),
    (None, "tags", N),
    (None, "thin", N),
    (Some('v'), "verbose", N),
    (None, "verify", N),
];

const FETCH: &[Opt] = &[
    (None, "all", N),
    (Some('a'), "append", N),
    (None, "atomic", N),
    (None, "auto-gc", N),
    (None, "auto-maintenance", N),
    (None, "deepen", V),
    (None, "depth", V),
    (None, "dry-run", N),
    (None, "filter", V),
    (Some('f'), "force", N),
    (Some('4'), "ipv4", N),
    (Some('6'), "ipv6", N),
    (Some('j'), "jobs", V),
    (Some('k'), "keep", N),
    (Some('m'), "multiple", N),
    (None, "negotiate-only", N),
    (None, "negotiation-tip", V),
    (None, "porcelain", N),
    (None, "prefetch", N),
    (None, "progress", N),
    (Some('p'), "prune", N),
    (Some('P'), "prune-tags", N),
    (Some('q'), "quiet", N),
    (None, "recurse-submodules", O),
    (None, "refetch", N),
    (None, "refmap", V),
    (Some('o'), "server-option", V),
    (None, "set-upstream", N),
    (None, "shallow-exclude", V),
    (None, "shallow-since", V),
    (None, "show-forced-updates", N),
    (None, "stdin", N),
    (Some('t'), "tags", N),
    (None, "unshallow", N),
    (Some('u'), "update-head-ok", N),
    (None, "update-shallow", N),
    (None, "upload-pack", V),
    (Some('v'), "verbose", N),
    (None, "write-commit-graph", N),
    (None, "write-fetch-head", N),
    (Some('n'), "", N),
];

const REBASE: &[Opt] = &[
    (None, "abort", N),
    (None, "apply", N),
    (None, "autosquash", N),
    (None, "autostash", N),
    (None, "committer-date-is-author-date", N),
    (None, "continue", N),
    (None, "edit-todo", N),
    (None, "empty", V),
    (Some('x'), "exec", V),
    (None, "ff", N),
    (Some('f'), "force-rebase", N),
    (None, "fork-point", N),
    (Some('S'), "gpg-sign", O),
    (None, "ignore-whitespace", N),
    (Some('i'), "interactive", N),
    (None, "keep-base", N),
    (Some('m'), "merge", N),
    (None, "no-ff", N),
    (Some('n'), "no-stat", N),
    (None, "no-verify", N),
    (None, "onto", V),
    (Some('q'), "quiet", N),
    (None, "quit", N),
    (None, "reapply-cherry-picks", N),
    (Some('r'), "rebase-merges", O),
    (None, "rerere-autoupdate", N),
    (None, "reschedule-failed-exec", N),
    (None, "reset-author-date", N),
    (None, "root", N),
    (None, "show-current-patch", N),
    (None, "signoff", N),
    (None, "skip", N),
    (None, "stat", N),
    (Some('s'), "strategy", V),
    (Some('X'), "strategy-option", V),
    (None, "update-refs", N),
    (Some('v'), "verbose", N),
    (None, "verify", N),
    (None, "whitespace", V),
    (Some('C'), "", V),
];

const CHECKOUT: &[Opt] = &[
    (None, "conflict", V),
    (Some('d'), "detach", N),
    (Some('f'), "force", N),
    (None, "guess", N),
    (None, "ignore-other-worktrees", N),
    (None, "ignore-skip-worktree-bits", N),
    (Some('m'), "merge", N),
    (None, "orphan", V),
    (Some('2'), "ours", N),
    (None, "overlay", N),
    (None, "overwrite-ignore", N),
    (Some('p'), "patch", N),
    (None, "pathspec-file-nul", N),
    (None, "pathspec-from-file", V),
    (None, "progress", N),
    (Some('q'), "quiet", N),
    (None, "recurse-submodules", O),
    (Some('3'), "theirs", N),
    (Some('t'), "track", O),
    (Some('B'), "", V),
    (Some('b'), "", V),
    (Some('l'), "", N),
];

const SWITCH: &[Opt] = &[
    (None, "conflict", V),
    (Some('c'), "create", V),
    (Some('d'), "detach", N),
    (None, "discard-changes", N),
    (Some('f'), "force", N),
    (Some('C'), "force-create", V),
    (None, "guess", N),
    (None, "ignore-other-worktrees", N),
    (Some('m'), "merge", N),
    (None, "orphan", V),
    (None, "overwrite-ignore", N),
    (None, "progress", N),
    (Some('q'), "quiet", N),
    (None, "recurse-submodules", O),
    (Some('t'), "track", O),
];

const RESTORE: &[Opt] = &[
    (None, "conflict", V),
    (None, "ignore-skip-worktree-bits", N),
    (None, "ignore-unmerged", N),
    (Some('m'), "merge", N),
    (Some('2'), "ours", N),
    (None, "overlay", N),
    (Some('p'), "patch", N),
    (None, "pathspec-file-nul", N),
    (None, "pathspec-from-file", V),
    (None, "progress", N),
    (Some('q'), "quiet", N),
    (None, "recurse-submodules", O),
    (Some('s'), "source", V),
    (Some('S'), "staged", N),
    (Some('3'), "theirs", N),
    (Some('W'), "worktree", N),
];

const RESET: &[Opt] = &[
    (None, "hard", N),
    (Some('N'), "intent-to-add", N),
    (None, "keep", N),
    (None, "merge", N),
    (None, "mixed", N),
    (None, "no-refresh", N),
    (Some('p'), "patch", N),
    (None, "pathspec-file-nul", N),
    (None, "pathspec-from-file", V),
    (Some('q'), "quiet", N),
    (None, "recurse-submodules", O),
    (None, "refresh", N),
    (None, "soft", N),
];

const BRANCH: &[Opt] = &[
    (None, "abbrev", O),
    (Some('a'), "all", N),
    (None, "color", O),
    (None, "column", O),
    (None, "contains", V),
    (Some('c'), "copy", N),
    (None, "create-reflog", N),
    (Some('d'), "delete", N),
    (None, "edit-description", N),
    (Some('f'), "force", N),
    (None, "format", V),
    (Some('i'), "ignore-case", N),
    (Some('l'), "list", N),
    (None, "merged", V),
    (Some('m'), "move", N),
    (None, "no-contains", V),
    (None, "no-merged", V),
    (None, "omit-empty", N),
    (None, "points-at", V),
    (Some('q'), "quiet", N),
    (None, "recurse-submodules", N),
    (Some('r'), "remotes", N),
    (Some('u'), "set-upstream-to", V),
    (None, "show-current", N),
    (None, "sort", V),
    (Some('t'), "track", O),
    (None, "unset-upstream", N),
    (Some('v'), "verbose", N),
    (Some('C'), "", N),
    (Some('D'), "", N),
    (Some('M'), "", N),
];

const TAG: &[Opt] = &[
    (Some('a'), "annotate", N),
    (None, "cleanup", V),
    (None, "color", O),
    (None, "column", O),
    (None, "contains", V),
    (None, "create-reflog", N),
    (Some('d'), "delete", N),
    (Some('e'), "edit", N),
    (Some('F'), "file", V),
    (Some('f'), "force", N),
    (None, "format", V),
    (Some('i'), "ignore-case", N),
    (Some('l'), "list", N),
    (Some('u'), "local-user", V),
    (None, "merged", V),
    (Some('m'), "message", V),
    (None, "no-contains", V),
    (None, "no-merged", V),
    (None, "omit-empty", N),
    (None, "points-at", V),
    (Some('s'), "sign", N),
    (None, "sort", V),
    (None, "trailer", V),
    (Some('v'), "verify", N),
    (Some('n'), "", O),
];

const CONFIG: &[Opt] = &[
    (None, "add", N),
    (None, "all", N),
    (None, "append", N),
    (None, "blob", V),
    (None, "bool", N),
    (None, "bool-or-int", N),
    (None, "bool-or-str", N),
    (None, "comment", V),
    (None, "default", V),
    (Some('e'), "edit", N),
    (None, "expiry-date", N),
    (Some('f'), "file", V),
    (None, "fixed-value", N),
    (None, "get", N),
    (None, "get-all", N),
    (None, "get-color", N),
    (None, "get-colorbool", N),
    (None, "get-regexp", N),
    (None, "get-urlmatch", N),
    (None, "global", N),
    (None, "includes", N),
    (None, "int", N),
    (Some('l'), "list", N),
    (None, "local", N),
    (None, "name-only", N),
    (Some('z'), "null", N),
    (None, "path", N),
    (None, "regexp", N),
    (None, "remove-section", N),
    (None, "rename-section", N),
    (None, "replace-all", N),
    (None, "show-names", N),
    (None, "show-origin", N),
    (None, "show-scope", N),
    (None, "system", N),
    (Some('t'), "type", V),
    (None, "unset", N),
    (None, "unset-all", N),
    (None, "url", V),
    (None, "value", V),
    (None, "worktree", N),
];

const UPDATE_REF: &[Opt] = &[
    (None, "create-reflog", N),
    (None, "deref", N),
    (None, "no-deref", N),
    (None, "stdin", N),
    (Some('d'), "", N),
    (Some('m'), "", V),
    (Some('z'), "", N),
];

const SYMBOLIC_REF: &[Opt] = &[
    (Some('d'), "delete", N),
    (Some('q'), "quiet", N),
    (None, "recurse", N),
    (None, "short", N),
    (Some('m'), "", V),
];

const NOTES: &[Opt] = &[
    (None, "abort", N),
    (None, "allow-empty", N),
    (None, "commit", N),
    (Some('n'), "dry-run", N),
    (Some('F'), "file", V),
    (None, "for-rewrite", V),
    (Some('f'), "force", N),
    (None, "ignore-missing", N),
    (Some('m'), "message", V),
    (Some('q'), "quiet", N),
    (Some('c'), "reedit-message", V),
    (None, "ref", V),
    (Some('C'), "reuse-message", V),
    (None, "separator", O),
    (None, "stdin", N),
    (Some('s'), "strategy", V),
    (None, "stripspace", N),
    (Some('v'), "verbose", N),
];

const WORKTREE: &[Opt] = &[
    (None, "checkout", N),
    (Some('d'), "detach", N),
    (Some('n'), "dry-run", N),
    (None, "expire", V),
    (Some('f'), "force", N),
    (None, "guess-remote", N),
    (None, "lock", N),
    (None, "orphan", N),
    (None, "porcelain", N),
    (Some('q'), "quiet", N),
    (None, "reason", V),
    (None, "track", N),
    (Some('v'), "verbose", N),
    (Some('B'), "", V),
    (Some('b'), "", V),
    (Some('z'), "", N),
];

const STASH: &[Opt] = &[
    (Some('a'), "all", N),
    (Some('u'), "include-untracked", N),
    (None, "index", N),
    (Some('k'), "keep-index", N),
    (Some('m'), "message", V),
    (None, "only-untracked", N),
    (Some('p'), "patch", N),
    (None, "pathspec-file-nul", N),
    (None, "pathspec-from-file", V),
    (Some('q'), "quiet", N),
    (Some('S'), "staged", N),
];

const CHERRY_PICK: &[Opt] = &[
    (None, "abort", N),
    (None, "allow-empty", N),
    (None, "allow-empty-message", N),
    (None, "cleanup", V),
    (None, "commit", N),
    (None, "continue", N),
    (Some('e'), "edit", N),
    (None, "empty", V),
    (None, "ff", N),
    (Some('S'), "gpg-sign", O),
    (None, "keep-redundant-commits", N),
    (Some('m'), "mainline", V),
    (Some('n'), "no-commit", N),
    (None, "quit", N),
    (None, "rerere-autoupdate", N),
    (Some('s'), "signoff", N),
    (None, "skip", N),
    (None, "strategy", V),
    (Some('X'), "strategy-option", V),
    (Some('x'), "", N),
];

const REVERT: &[Opt] = &[
    (None, "abort", N),
    (None, "cleanup", V),
    (None, "commit", N),
    (None, "continue", N),
    (Some('e'), "edit", N),
    (Some('S'), "gpg-sign", O),
    (Some('m'), "mainline", V),
    (Some('n'), "no-commit", N),
    (None, "quit", N),
    (None, "reference", N),
    (None, "rerere-autoupdate", N),
    (Some('s'), "signoff", N),
    (None, "skip", N),
    (None, "strategy", V),
    (Some('X'), "strategy-option", V),
];

const AM: &[Opt] = &[
    (Some('3'), "3way", N),
    (None, "abort", N),
    (None, "allow-empty", N),
    (None, "committer-date-is-author-date", N),
    (None, "continue", N),
    (None, "directory", V),
    (None, "empty", V),
    (None, "exclude", V),
    (Some('S'), "gpg-sign", O),
    (None, "ignore-date", N),
    (None, "ignore-space-change", N),
    (None, "ignore-whitespace", N),
    (None, "include", V),
    (Some('i'), "interactive", N),
    (Some('k'), "keep", N),
    (None, "keep-cr", N),
    (None, "keep-non-patch", N),
    (Some('m'), "message-id", N),
    (None, "no-keep-cr", N),
    (Some('n'), "no-verify", N),
    (None, "patch-format", V),
    (Some('q'), "quiet", N),
    (None, "quit", N),
    (None, "quoted-cr", V),
    (None, "reject", N),
    (None, "rerere-autoupdate", N),
    (Some('r'), "resolved", N),
    (None, "resolvemsg", V),
    (None, "retry", N),
    (Some('c'), "scissors", N),
    (None, "show-current-patch", O),
    (Some('s'), "signoff", N),
    (None, "skip", N),
    (Some('u'), "utf8", N),
    (None, "verify", N),
    (None, "whitespace", V),
    (Some('C'), "", V),
    (Some('p'), "", V),
];

const APPLY: &[Opt] = &[
    (Some('3'), "3way", N),
    (None, "add", N),
    (None, "allow-binary-replacement", N),
    (None, "allow-empty", N),
    (None, "allow-overlap", N),
    (None, "apply", N),
    (None, "binary", N),
    (None, "build-fake-ancestor", V),
    (None, "cached", N),
    (None, "check", N),
    (None, "directory", V),
    (None, "exclude", V),
    (None, "ignore-space-change", N),
    (None, "ignore-whitespace", N),
    (None, "inaccurate-eof", N),
    (None, "include", V),
    (None, "index", N),
    (Some('N'), "intent-to-add", N),
    (None, "no-add", N),
    (None, "numstat", N),
    (None, "ours", N),
    (Some('q'), "quiet", N),
    (None, "recount", N),
    (None, "reject", N),
    (Some('R'), "reverse", N),
    (None, "stat", N),
    (None, "summary", N),
    (None, "theirs", N),
    (None, "unidiff-zero", N),
    (None, "union", N),
    (None, "unsafe-paths", N),
    (Some('v'), "verbose", N),
    (None, "whitespace", V),
    (Some('C'), "", V),
    (Some('p'), "", V),
    (Some('z'), "", N),
];

const RM: &[Opt] = &[
    (None, "cached", N),
    (Some('n'), "dry-run", N),
    (Some('f'), "force", N),
    (None, "ignore-unmatch", N),
    (None, "pathspec-file-nul", N),
    (None, "pathspec-from-file", V),
    (Some('q'), "quiet", N),
    (None, "sparse", N),
    (Some('r'), "", N),
];

const MV: &[Opt] = &[
    (Some('n'), "dry-run", N),
    (Some('f'), "force", N),
    (None, "sparse", N),
    (Some('v'), "verbose", N),
    (Some('k'), "", N),
];

const ADD: &[Opt] = &[
    (Some('A'), "all", N),
    (None, "chmod", V),
    (Some('n'), "dry-run", N),
    (Some('e'), "edit", N),
    (Some('f'), "force", N),
    (None, "ignore-errors", N),
    (None, "ignore-missing", N),
    (None, "ignore-removal", N),
    (Some('N'), "intent-to-add", N),
    (Some('i'), "interactive", N),
    (Some('p'), "patch", N),
    (None, "pathspec-file-nul", N),
    (None, "pathspec-from-file", V),
    (None, "refresh", N),
    (None, "renormalize", N),
    (None, "sparse", N),
    (Some('u'), "update", N),
    (Some('v'), "verbose", N),
];

const LOG: &[Opt] = &[
    (None, "clear-decorations", N),
    (None, "decorate", O),
    (None, "decorate-refs", V),
    (None, "decorate-refs-exclude", V),
    (None, "mailmap", N),
    (Some('q'), "quiet", N),
    (None, "source", N),
    (None, "use-mailmap", N),
    (Some('L'), "", V),
];

const DIFF: &[Opt] = &[
    (None, "abbrev", O),
    (None, "anchored", V),
    (None, "binary", N),
    (Some('B'), "break-rewrites", O),
    (None, "check", N),
    (None, "color", O),
    (None, "color-moved", O),
    (None, "color-moved-ws", V),
    (None, "color-words", O),
    (None, "compact-summary", N),
    (None, "cumulative", N),
    (None, "default-prefix", N),
    (None, "diff-algorithm", V),
    (None, "diff-filter", V),
    (Some('X'), "dirstat", O),
    (None, "dirstat-by-file", O),
    (None, "dst-prefix", V),
    (None, "exit-code", N),
    (None, "ext-diff", N),
    (Some('C'), "find-copies", O),
    (None, "find-copies-harder", N),
    (None, "find-object", V),
    (Some('M'), "find-renames", O),
    (None, "follow", N),
    (None, "full-index", N),
    (Some('W'), "function-context", N),
    (None, "histogram", N),
    (Some('w'), "ignore-all-space", N),
    (None, "ignore-blank-lines", N),
    (None, "ignore-cr-at-eol", N),
    (Some('I'), "ignore-matching-lines", V),
    (None, "ignore-space-at-eol", N),
    (Some('b'), "ignore-space-change", N),
    (None, "ignore-submodules", O),
    (None, "indent-heuristic", N),
    (None, "inter-hunk-context", V),
    (Some('D'), "irreversible-delete", N),
    (None, "ita-invisible-in-index", N),
    (None, "ita-visible-in-index", N),
    (None, "line-prefix", V),
    (None, "minimal", N),
    (None, "name-only", N),
    (None, "name-status", N),
    (None, "no-index", N),
    (Some('s'), "no-patch", N),
    (None, "no-prefix", N),
    (None, "no-renames", N),
    (None, "numstat", N),
    (None, "output", V),
    (None, "output-indicator-context", V),
    (None, "output-indicator-new", V),
    (None, "output-indicator-old", V),
    (Some('p'), "patch", N),
    (None, "patch-with-raw", N),
    (None, "patch-with-stat", N),
    (None, "patience", N),
    (None, "pickaxe-all", N),
    (None, "pickaxe-regex", N),
    (None, "quiet", N),
    (None, "raw", N),
    (None, "relative", O),
    (None, "rename-empty", N),
    (None, "rotate-to", V),
    (None, "shortstat", N),
    (None, "skip-to", V),
    (None, "src-prefix", V),
    (None, "stat", O),
    (None, "stat-count", V),
    (None, "stat-graph-width", V),
    (None, "stat-name-width", V),
    (None, "stat-width", V),
    (None, "submodule", O),
    (None, "summary", N),
    (Some('a'), "text", N),
    (None, "textconv", N),
    (Some('U'), "unified", O),
    (None, "word-diff", O),
    (None, "word-diff-regex", V),
    (None, "ws-error-highlight", V),
    (Some('G'), "", V),
    (Some('O'), "", V),
    (Some('R'), "", N),
    (Some('S'), "", V),
    (Some('l'), "", V),
    (Some('u'), "", N),
    (Some('z'), "", N),
];

const FORMAT_PATCH: &[Opt] = &[
    (None, "add-header", V),
    (None, "attach", O),
    (None, "base", V),
    (None, "binary", N),
    (None, "cc", V),
    (None, "cover-from-description", V),
    (None, "cover-letter", N),
    (None, "creation-factor", V),
    (None, "description-file", V),
    (None, "filename-max-length", V),
    (None, "force-in-body-from", N),
    (None, "from", O),
    (None, "ignore-if-in-upstream", N),
    (None, "in-reply-to", V),
    (None, "inline", O),
    (None, "interdiff", V),
    (Some('k'), "keep-subject", N),
    (None, "no-binary", N),
    (Some('N'), "no-numbered", N),
    (Some('p'), "no-stat", N),
    (Some('n'), "numbered", N),
    (None, "numbered-files", N),
    (Some('o'), "output-directory", V),
    (None, "progress", N),
    (Some('q'), "quiet", N),
    (None, "range-diff", V),
    (Some('v'), "reroll-count", V),
    (None, "rfc", O),
    (None, "signature", V),
    (None, "signature-file", V),
    (Some('s'), "signoff", N),
    (None, "start-number", V),
    (None, "stdout", N),
    (None, "subject-prefix", V),
    (None, "suffix", V),
    (None, "thread", O),
    (None, "to", V),
    (None, "zero-commit", N),
];

const GC: &[Opt] = &[
    (None, "aggressive", N),
    (None, "auto", N),
    (None, "cruft", N),
    (None, "detach", N),
    (None, "force", N),
    (None, "keep-largest-pack", N),
    (None, "max-cruft-size", V),
    (None, "prune", O),
    (Some('q'), "quiet", N),
];

const REFLOG: &[Opt] = &[
    (None, "all", N),
    // `expire -n` and `delete -n`; left to `-n <count>` of the log options, which `git reflog
    // -n 15` means and which go before any sub-subcommand word.
    (None, "dry-run", N),
    (None, "expire", V),
    (None, "expire-unreachable", V),
    (None, "rewrite", N),
    (None, "single-worktree", N),
    (None, "stale-fix", N),
    (None, "updateref", N),
    (None, "verbose", N),
];

const REPLACE: &[Opt] = &[
    (None, "convert-graft-file", N),
    (Some('d'), "delete", N),
    (Some('e'), "edit", N),
    (Some('f'), "force", N),
    (None, "format", V),
    (Some('g'), "graft", N),
    (Some('l'), "list", N),
    (None, "raw", N),
];

const CLONE: &[Opt] = &[
    (None, "also-filter-submodules", N),
    (None, "bare", N),
    (Some('b'), "branch", V),
    (None, "bundle-uri", V),
    (None, "checkout", N),
    (Some('c'), "config", V),
    (None, "depth", V),
    (None, "dissociate", N),
    (None, "filter", V),
    (None, "hardlinks", N),
    (Some('4'), "ipv4", N),
    (Some('6'), "ipv6", N),
    (Some('j'), "jobs", V),
    (Some('l'), "local", N),
    (None, "mirror", N),
    (None, "naked", N),
    (Some('n'), "no-checkout", N),
    (None, "no-hardlinks", N),
    (None, "no-tags", N),
    (Some('o'), "origin", V),
    (None, "progress", N),
    (Some('q'), "quiet", N),
    (None, "recurse-submodules", O),
    (None, "recursive", O),
    (None, "ref-format", V),
    (None, "reference", V),
    (None, "reference-if-able", V),
    (None, "reject-shallow", N),
    (None, "remote-submodules", N),
    (None, "separate-git-dir", V),
    (None, "server-option", V),
    (None, "shallow-exclude", V),
    (None, "shallow-since", V),
    (None, "shallow-submodules", N),
    (Some('s'), "shared", N),
    (None, "single-branch", N),
    (None, "sparse", N),
    (None, "tags", N),
    (None, "template", V),
    (Some('u'), "upload-pack", V),
    (Some('v'), "verbose", N),
];

const SUBMODULE: &[Opt] = &[
    (None, "all", N),
    (Some('b'), "branch", V),
    (None, "cached", N),
    (None, "checkout", N),
    (Some('d'), "default", N),
    (None, "depth", V),
    (None, "dissociate", N),
    (None, "fetch", N),
    (None, "files", N),
    (None, "filter", V),
    (None, "for-status", N),
    (Some('f'), "force", N),
    (None, "init", N),
    (Some('j'), "jobs", V),
    (Some('m'), "merge", N),
    (None, "name", V),
    (Some('N'), "no-fetch", N),
    (None, "progress", N),
    (Some('q'), "quiet", N),
    (Some('r'), "rebase", N),
    (None, "recommend-shallow", N),
    (None, "recursive", N),
    (None, "ref-format", V),
    (None, "reference", V),
    (None, "remote", N),
    (None, "require-init", N),
    (None, "single-branch", N),
    (Some('n'), "summary-limit", V),
    (None, "super-prefix", V),
];

const CLEAN: &[Opt] = &[
    (Some('n'), "dry-run", N),
    (Some('e'), "exclude", V),
    (Some('f'), "force", N),
    (Some('i'), "interactive", N),
    (Some('q'), "quiet", N),
    (Some('X'), "", N),
    (Some('d'), "", N),
    (Some('x'), "", N),
];

const GREP: &[Opt] = &[
    (Some('A'), "after-context", V),
    (None, "all-match", N),
    (None, "and", N),
    (Some('G'), "basic-regexp", N),
    (Some('B'), "before-context", V),
    (None, "break", N),
    (None, "cached", N),
    (None, "color", O),
    (None, "column", N),
    (Some('C'), "context", V),
    (Some('c'), "count", N),
    (None, "exclude-standard", N),
    (None, "ext-grep", N),
    (Some('E'), "extended-regexp", N),
    (Some('l'), "files-with-matches", N),
    (Some('L'), "files-without-match", N),
    (Some('F'), "fixed-strings", N),
    (None, "full-name", N),
    (Some('W'), "function-context", N),
    (None, "heading", N),
    (Some('i'), "ignore-case", N),
    (None, "index", N),
    (Some('v'), "invert-match", N),
    (Some('n'), "line-number", N),
    (Some('m'), "max-count", V),
    (None, "max-depth", V),
    (None, "name-only", N),
    (None, "no-index", N),
    (None, "not", N),
    (Some('z'), "null", N),
    (Some('o'), "only-matching", N),
    (Some('O'), "open-files-in-pager", O),
    (None, "or", N),
    (Some('P'), "perl-regexp", N),
    (Some('q'), "quiet", N),
    (None, "recurse-submodules", N),
    (Some('r'), "recursive", N),
    (Some('p'), "show-function", N),
    (Some('a'), "text", N),
    (None, "textconv", N),
    (None, "threads", V),
    (None, "untracked", N),
    (Some('w'), "word-regexp", N),
    (Some('H'), "", N),
    (Some('I'), "", N),
    (Some('e'), "", V),
    (Some('f'), "", V),
    (Some('h'), "", N),
];

const ARCHIVE: &[Opt] = &[
    (None, "add-file", V),
    (None, "add-virtual-file", V),
    (None, "exec", V),
    (None, "format", V),
    (Some('l'), "list", N),
    (None, "mtime", V),
    (Some('o'), "output", V),
    (None, "prefix", V),
    (None, "remote", V),
    (Some('v'), "verbose", N),
    (None, "worktree-attributes", N),
];

const BLAME: &[Opt] = &[
    (None, "abbrev", O),
    (None, "color-by-age", N),
    (None, "color-lines", N),
    (None, "contents", V),
    (None, "ignore-rev", V),
    (None, "ignore-revs-file", V),
    (None, "incremental", N),
    (None, "line-porcelain", N),
    (None, "minimal", N),
    (Some('p'), "porcelain", N),
    (None, "progress", N),
    (None, "root", N),
    (None, "score-debug", N),
    (Some('e'), "show-email", N),
    (Some('f'), "show-name", N),
    (Some('n'), "show-number", N),
    (None, "show-stats", N),
    (Some('C'), "", O),
    (Some('L'), "", V),
    (Some('M'), "", O),
    (Some('S'), "", V),
    (Some('b'), "", N),
    (Some('c'), "", N),
    (Some('l'), "", N),
    (Some('s'), "", N),
    (Some('t'), "", N),
    (Some('w'), "", N),
];

const STATUS: &[Opt] = &[
    (None, "ahead-behind", N),
    (Some('b'), "branch", N),
    (None, "column", O),
    (Some('M'), "find-renames", O),
    (None, "ignore-submodules", O),
    (None, "ignored", O),
    (None, "long", N),
    (None, "no-renames", N),
    (Some('z'), "null", N),
    (None, "porcelain", O),
    (None, "renames", N),
    (Some('s'), "short", N),
    (None, "show-stash", N),
    (Some('u'), "untracked-files", O),
    (Some('v'), "verbose", N),
];

const REMOTE: &[Opt] = &[
    (None, "add", N),
    (None, "all", N),
    (Some('a'), "auto", N),
    (Some('d'), "delete", N),
    (Some('n'), "dry-run", N),
    (Some('f'), "fetch", N),
    (Some('m'), "master", V),
    (None, "mirror", O),
    (None, "progress", N),
    (Some('p'), "prune", N),
    (None, "push", N),
    (None, "tags", N),
    (Some('t'), "track", V),
    (Some('v'), "verbose", N),
];

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;
    use std::fs;
    use std::path::{Path, PathBuf};
    use std::process::{Command, Output, Stdio};

    const COVERED: &[&str] = &[
        "commit",
        "merge",
        "pull",
        "push",
        "fetch",
        "rebase",
        "checkout",
        "switch",
        "restore",
        "reset",
        "branch",
        "tag",
        "config",
        "update-ref",
        "symbolic-ref",
        "notes",
        "worktree",
        "stash",
        "cherry-pick",
        "revert",
        "am",
        "apply",
        "rm",
        "mv",
        "add",
        "log",
        "diff",
        "show",
        "format-patch",
        "gc",
        "reflog",
        "replace",
        "clone",
        "submodule",
        "clean",
        "grep",
        "archive",
        "fast-import",
        "bisect",
        "blame",
        "status",
        "remote",
        // Not asked for, but they print a diff and so take `--output`.
        "whatchanged",
        "diff-tree",
        "diff-files",
        "diff-index",
    ];

    /// The sub-subcommands whose options `git <sub> -h` leaves out. Not asked: `stash create`
    /// (it makes a stash commit whose message is `-h`) and `bisect start` (it starts
    /// bisecting). `git config set -h` and friends are harmless in a git before 2.46, which
    /// reads them as a key without a section.
    const SUBCOMMANDS: &[(&str, &[&str])] = &[
        (
            "notes",
            &[
                "list", "add", "copy", "append", "edit", "show", "merge", "remove", "prune",
                "get-ref",
            ],
        ),
        (
            "worktree",
            &[
                "add", "list", "lock", "move", "prune", "remove", "repair", "unlock",
            ],
        ),
        (
            "stash",
            &[
                "list", "show", "drop", "pop", "apply", "branch", "push", "save", "clear", "store",
            ],
        ),
        ("reflog", &["show", "list", "expire", "delete", "exists"]),
        (
            "remote",
            &[
                "add",
                "rename",
                "remove",
                "set-head",
                "show",
                "prune",
                "update",
                "set-branches",
                "get-url",
                "set-url",
            ],
        ),
        (
            "config",
            &[
                "list",
                "get",
                "set",
                "unset",
                "rename-section",
                "remove-section",
                "edit",
            ],
        ),
    ];

    /// git-submodule.sh answers `-h` with its usage alone and hands the work, options
    /// included, to `git submodule--helper`, whose `-h` lists them.
    const SUBMODULE_HELPER: &[&str] = &[
        "add",
        "status",
        "init",
        "deinit",
        "update",
        "set-branch",
        "set-url",
        "summary",
        "foreach",
        "sync",
        "absorbgitdirs",
    ];

    /// Hook bypasses younger than a git the tests may meet: (command, option, first git).
    const SINCE: &[(&str, &str, (u32, u32))] = &[("am", "--no-verify", (2, 40))];

    fn git_under_test() -> String {
        std::env::var("GIT_ORCHESTRATE_TEST_GIT").unwrap_or_else(|_| "git".to_string())
    }

    /// A throwaway place to run git in: `outside` is in no repository, so `git diff -h` lists
    /// the diff options (inside one it prints an older summary); `repo` is a fresh repository,
    /// which sub-subcommands want even for `-h`. Removed on drop.
    struct Scratch {
        root: PathBuf,
    }

    impl Scratch {
        fn new(test: &str) -> Scratch {
            let root = std::env::temp_dir().join(format!(
                "git-orchestrate-git-options-{test}-{}",
                std::process::id()
            ));
            let _ = fs::remove_dir_all(&root);
            fs::create_dir_all(root.join("outside")).expect("scratch directory");
            fs::write(root.join("gitconfig"), "").expect("scratch gitconfig");
            let scratch = Scratch { root };
            let init = scratch.git(&scratch.root, &["init", "-q", "repo"]);
            assert!(
                init.status.success(),
                "{} init: {}",
                git_under_test(),
                String::from_utf8_lossy(&init.stderr)
            );
            scratch
        }

        fn outside(&self) -> PathBuf {
            self.root.join("outside")
        }

        fn repo(&self) -> PathBuf {
            self.root.join("repo")
        }

        /// None of the caller's git environment reaches git: a hook running these tests sets
        /// GIT_DIR, which would point every command at the project's repository, and the
        /// user's configuration could alias or translate what git prints.
        fn git(&self, dir: &Path, args: &[&str]) -> Output {
            let mut command = Command::new(git_under_test());
            for (key, _) in std::env::vars_os() {
                if key.to_string_lossy().starts_with("GIT_") {
                    command.env_remove(key);
                }
            }
            command
                .args(args)
                .current_dir(dir)
                .env("GIT_CEILING_DIRECTORIES", &self.root)
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .env("GIT_CONFIG_GLOBAL", self.root.join("gitconfig"))
                .env("HOME", &self.root)
                .env("XDG_CONFIG_HOME", &self.root)
                .env("GIT_EDITOR", "false")
                .env("GIT_PAGER", "cat")
                .env("GIT_TERMINAL_PROMPT", "0")
                .env("LC_ALL", "C")
                .env_remove("LANGUAGE")
                .stdin(Stdio::null());
            command
                .output()
                .unwrap_or_else(|e| panic!("running {}: {e}", git_under_test()))
        }

        /// What git prints for `args`; `-h` exits 129, which says nothing here.
        fn help(&self, dir: &Path, args: &[&str]) -> String {
            let output = self.git(dir, args);
            format!(
                "{}{}",
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            )
        }

        /// Every option git lists for `git <sub>`, its sub-subcommands' included.
        fn listed(&self, sub: &str) -> Vec<(Option<char>, Option<String>, Takes)> {
            let mut texts = vec![self.help(&self.outside(), &[sub, "-h"])];
            for (_, names) in SUBCOMMANDS.iter().filter(|(name, _)| *name == sub) {
                for name in names.iter() {
                    texts.push(self.help(&self.repo(), &[sub, name, "-h"]));
                }
            }
            if sub == "submodule" {
                for name in SUBMODULE_HELPER {
                    texts.push(self.help(&self.repo(), &["submodule--helper", name, "-h"]));
                }
            }
            texts.iter().flat_map(|text| parse_help(text)).collect()
        }

        fn version(&self) -> (u32, u32) {
            let text = self.help(&self.outside(), &["--version"]);
            let mut numbers = text
                .split_whitespace()
                .nth(2)
                .unwrap_or_default()
                .split('.')
                .map(|n| n.parse::<u32>().unwrap_or_default());
            (
                numbers.next().unwrap_or_default(),
                numbers.next().unwrap_or_default(),
            )
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.root);
        }
    }

    fn spelled(short: Option<char>, long: &Option<String>) -> String {
        match (short, long) {
            (Some(c), Some(name)) => format!("-{c}/--{name}"),
            (Some(c), None) => format!("-{c}"),
            (None, Some(name)) => format!("--{name}"),
            (None, None) => String::new(),
        }
    }

    fn typed(letter: Option<char>, name: &str) -> String {
        match letter {
            Some(c) => format!("-{c}/{name}"),
            None => name.to_string(),
        }
    }

    fn owned(
        options: &[(Option<char>, Option<&str>, Takes)],
    ) -> Vec<(Option<char>, Option<String>, Takes)> {
        options
            .iter()
            .map(|(short, long, takes)| (*short, long.map(str::to_string), *takes))
            .collect()
    }

    #[test]
    fn parse_help_reads_a_current_listing() {
        let text = "\
usage: git commit [-a | --interactive | --patch] [-s] [-v] [-u<mode>] [--amend]
                  [-F <file> | -m <msg>] [--reset-author] [--allow-empty]

    -q, --[no-]quiet      suppress summary after successful commit

Commit message options
    -F, --[no-]file <file>
                          read message from file
    --[no-]author <author>
                          override author for commit
    --[no-]fixup [(amend|reword):]commit
                          use autosquash formatted message to fixup or amend/reword specified commit
    -S, --[no-]gpg-sign[=<key-id>]
                          GPG sign commit

Commit contents options
    -n, --no-verify       bypass pre-commit and commit-msg hooks
    --verify              opposite of --no-verify
    -u, --[no-]untracked-files[=<mode>]
                          show untracked files, optional modes: all, normal, no. (Default: all)
";
        assert_eq!(
            parse_help(text),
            owned(&[
                (Some('q'), Some("quiet"), N),
                (Some('F'), Some("file"), V),
                (None, Some("author"), V),
                (None, Some("fixup"), V),
                (Some('S'), Some("gpg-sign"), O),
                (Some('n'), Some("no-verify"), N),
                (None, Some("verify"), N),
                (Some('u'), Some("untracked-files"), O),
            ])
        );
    }

    #[test]
    fn parse_help_reads_an_older_listing() {
        // git 2.39: no `[no-]`, and one option with the raw short name 1.
        let text = "\
usage: git apply [<options>] [<patch>...]

    --exclude <path>      don't apply changes matching the given path
    -p <num>              remove <num> leading slashes from traditional diff paths
    --no-add              ignore additions made by the patch
    -C <n>                ensure at least <n> lines of context match
    --whitespace <action>
                          detect new or modified lines that have whitespace errors
    -v, --verbose         be verbose
    -\u{1}, --single-worktree
                          limits processing to reflogs from the current worktree only
";
        assert_eq!(
            parse_help(text),
            owned(&[
                (None, Some("exclude"), V),
                (Some('p'), None, V),
                (None, Some("no-add"), N),
                (Some('C'), None, V),
                (None, Some("whitespace"), V),
                (Some('v'), Some("verbose"), N),
                (None, Some("single-worktree"), N),
            ])
        );
    }

    #[test]
    fn parse_help_tells_placeholders_from_descriptions() {
        let text = "\
Diff output format options
    -U, --unified[=<n>]   generate diffs with <n> lines context
    --stat[=<width>[,<name-width>[,<count>]]]
                          generate diffstat
    --ignore-space-at-eol ignore changes in whitespace at EOL
    --no-assume-unchanged clear assumed-unchanged bit
    --chmod (+|-)x        override the executable bit of the listed files
    -l <n>                prevent rename/copy detection if the number of rename/copy targets exceeds given limit
    --diff-filter [(A|C|D|M|R|T|U|X|B)...[*]]
                          select files by diff type
    --[no-]decorate[=...] decorate options
    -o, --output-directory <dir>
                          store resulting files in <dir>
    -NUM                  shortcut for -C NUM
    (
    )
    -e <pattern>          match <pattern>
    <rev-opts> are documented in git-rev-list(1)
";
        assert_eq!(
            parse_help(text),
            owned(&[
                (Some('U'), Some("unified"), O),
                (None, Some("stat"), O),
                (None, Some("ignore-space-at-eol"), N),
                (None, Some("no-assume-unchanged"), N),
                (None, Some("chmod"), V),
                (Some('l'), None, V),
                (None, Some("diff-filter"), V),
                (None, Some("decorate"), O),
                (Some('o'), Some("output-directory"), V),
                (Some('e'), None, V),
            ])
        );
    }

    #[test]
    fn parse_help_of_a_usage_alone_is_empty() {
        let text = "\
usage: git worktree add [-f] [--detach] [--checkout] [--lock [--reason <string>]]
                        [--orphan] [(-b | -B) <new-branch>] <path> [<commit-ish>]
   or: git worktree list [-v | --porcelain [-z]]
";
        assert_eq!(parse_help(text), Vec::new());
    }

    #[test]
    fn long_options_read_as_git_reads_them() {
        assert_eq!(long("commit", "--message"), Some(V));
        assert_eq!(long("commit", "--mess"), Some(V));
        assert_eq!(long("commit", "--me"), Some(V), "any unambiguous prefix");
        assert_eq!(long("commit", "--message=x"), Some(V));
        assert_eq!(long("commit", "--untracked-files"), Some(O));
        assert_eq!(long("commit", "--untracked-files=no"), Some(V));
        assert_eq!(long("commit", "--amend"), Some(N));
        assert_eq!(long("commit", "--amend=x"), None);
        assert_eq!(long("commit", "--no-message"), Some(N));
        assert_eq!(long("commit", "--no-verify"), Some(N));
        assert_eq!(long("commit", "--verify"), Some(N));
        assert_eq!(
            long("commit", "--no-ver"),
            None,
            "--no-verbose or --no-verify"
        );
        assert_eq!(long("commit", "--no-veri"), Some(N));
        assert_eq!(long("commit", "--unknown"), None);
        assert_eq!(long("commit", "-m"), None);
        assert_eq!(long("commit", "--"), None);
        assert_eq!(long("nonesuch", "--message"), None);
        assert_eq!(long("log", "--author"), Some(V));
        assert_eq!(long("log", "--format"), Some(O));
        assert_eq!(long("log", "--format=%H"), Some(V));
        assert_eq!(long("log", "--output"), Some(V));
        assert_eq!(long("diff", "--stat"), Some(O));
        assert_eq!(long("clone", "--no-checkout"), Some(N));
        assert_eq!(long("worktree", "--reason"), Some(V));
    }

    #[test]
    fn long_names_expand() {
        assert_eq!(expand_long("commit", "no-veri"), Some("no-verify"));
        assert_eq!(expand_long("commit", "no-ver"), None);
        assert_eq!(expand_long("commit", "no-verify"), Some("no-verify"));
        assert_eq!(expand_long("pull", "no-verify"), Some("no-verify"));
        assert_eq!(
            expand_long("pull", "no-veri"),
            None,
            "or --no-verify-signatures"
        );
        assert_eq!(expand_long("pull", "no-verify-s"), None, "a negation");
        assert_eq!(expand_long("log", "output=x"), Some("output"));
        assert_eq!(expand_long("log", "no-output"), None);
        assert_eq!(
            expand_long("format-patch", "output-dir"),
            Some("output-directory")
        );
    }

    #[test]
    fn short_options_read_as_git_reads_them() {
        assert_eq!(short("commit", 'm'), Some(V));
        assert_eq!(short("commit", 'u'), Some(O));
        assert_eq!(short("commit", 'a'), Some(N));
        assert_eq!(short("commit", 'Z'), None);
        assert_eq!(short("log", 'n'), Some(V));
        assert_eq!(short("log", '3'), Some(N));
        assert_eq!(
            short("format-patch", 'n'),
            Some(N),
            "--numbered, not --max-count"
        );
        assert_eq!(short("format-patch", 'o'), Some(V));
        assert_eq!(short("grep", 'e'), Some(V));
        assert_eq!(short("checkout", 'b'), Some(V));
    }

    #[test]
    fn global_options_read_as_git_reads_them() {
        assert_eq!(global("-C"), Some(V));
        assert_eq!(global("-c"), Some(V));
        assert_eq!(global("-Cdir"), None);
        assert_eq!(global("--git-dir"), Some(V));
        assert_eq!(global("--git-dir=.git"), Some(V));
        assert_eq!(global("--git"), None, "git.c takes no abbreviation");
        assert_eq!(global("--exec-path"), Some(O));
        assert_eq!(global("--exec-path=/x"), Some(V));
        assert_eq!(global("--config-env"), Some(V));
        assert_eq!(global("--list-cmds=main"), Some(V));
        assert_eq!(global("--no-pager"), Some(N));
        assert_eq!(global("-P"), Some(N));
        assert_eq!(global("--bare=x"), None);
        assert_eq!(global("--"), None);
        assert_eq!(global("--=x"), None);
    }

    #[test]
    fn every_covered_subcommand_has_a_table() {
        let bare: Vec<&&str> = COVERED
            .iter()
            .filter(|sub| sections(sub).is_empty())
            .collect();
        assert!(bare.is_empty(), "no table for {bare:?}");
    }

    #[test]
    fn hook_bypasses_and_written_files_are_options_of_the_table() {
        let mut wrong = Vec::new();
        for sub in COVERED {
            for (letter, name) in hook_bypass(sub) {
                let bare = name.strip_prefix("--").unwrap_or_default();
                if long(sub, name) != Some(N)
                    || expand_long(sub, bare) != Some(bare)
                    || letter.is_some_and(|c| short(sub, c) != Some(N))
                {
                    wrong.push(format!("git {sub} {}", typed(*letter, name)));
                }
            }
            for word in writes_file(sub) {
                let takes = match word.strip_prefix("--") {
                    Some(_) => long(sub, word),
                    None => word.chars().nth(1).and_then(|c| short(sub, c)),
                };
                if !matches!(takes, Some(V | O)) {
                    wrong.push(format!("git {sub} {word}: {takes:?}"));
                }
            }
        }
        assert!(
            wrong.is_empty(),
            "not value options of the table:\n{}",
            wrong.join("\n")
        );
    }

    #[test]
    fn every_value_option_git_lists_is_in_the_table() {
        let scratch = Scratch::new("values");
        let mut seen = 0;
        let mut wrong = BTreeSet::new();
        for sub in COVERED {
            for (letter, name, takes) in scratch.listed(sub) {
                seen += 1;
                if takes == N {
                    continue;
                }
                let by_long = name.as_ref().map(|name| long(sub, &format!("--{name}")));
                let by_short = letter.map(|c| short(sub, c));
                for table in [by_long, by_short].into_iter().flatten() {
                    if table != Some(takes) {
                        wrong.insert(format!(
                            "git {sub} {}: git says {takes:?}, the table {table:?}",
                            spelled(letter, &name)
                        ));
                    }
                }
            }
        }
        // A git that printed no listing would leave nothing to compare.
        assert!(
            seen > 500,
            "{} listed only {seen} options",
            git_under_test()
        );
        assert!(
            wrong.is_empty(),
            "{} ({}.{}) lists options the table reads otherwise:\n{}",
            git_under_test(),
            scratch.version().0,
            scratch.version().1,
            wrong.into_iter().collect::<Vec<_>>().join("\n")
        );
    }

    #[test]
    fn hook_bypass_options_exist_in_git() {
        let scratch = Scratch::new("hooks");
        let installed = scratch.version();
        let mut absent = Vec::new();
        for sub in COVERED {
            let bypasses = hook_bypass(sub);
            if bypasses.is_empty() {
                continue;
            }
            let listed = scratch.listed(sub);
            for (letter, name) in bypasses {
                let since = SINCE
                    .iter()
                    .find(|(s, n, _)| s == sub && n == name)
                    .map_or((0, 0), |(_, _, version)| *version);
                if installed < since {
                    continue;
                }
                let bare = name.strip_prefix("--").unwrap_or_default();
                // Before `[no-]` was printed (git 2.39), `--verify` stood for both.
                let long_listed = listed.iter().any(|(_, long, _)| {
                    long.as_deref() == Some(bare)
                        || bare
                            .strip_prefix("no-")
                            .is_some_and(|positive| long.as_deref() == Some(positive))
                });
                let short_listed = letter.is_none_or(|c| {
                    listed
                        .iter()
                        .any(|(short, long, _)| *short == Some(c) && long.as_deref() == Some(bare))
                });
                if !long_listed || !short_listed {
                    absent.push(format!("git {sub} {}", typed(*letter, name)));
                }
            }
        }
        assert!(
            absent.is_empty(),
            "{} ({}.{}) does not list:\n{}",
            git_under_test(),
            installed.0,
            installed.1,
            absent.join("\n")
        );
    }
}
