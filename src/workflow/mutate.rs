//! The built-in line mutator of the adequacy check (docs/integrity.md, "Adequacy by
//! mutation"): from a file's text and the lines a task changed, the small faults a test of
//! that code should notice, one line each. Pure: the engine writes and runs them.

use std::collections::BTreeMap;

/// One fault in one line: `line` (1-based) replaced by `replacement`, or removed when there
/// is none.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mutant {
    pub path: String,
    pub line: usize,
    /// What was changed, as the final note names it (`` `*` → `/` ``, `line removed`).
    pub what: String,
    pub replacement: Option<String>,
}

impl Mutant {
    /// `text` with this fault in it.
    pub fn apply(&self, text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        for (i, line) in text.split_inclusive('\n').enumerate() {
            if i + 1 != self.line {
                out.push_str(line);
                continue;
            }
            if let Some(replacement) = &self.replacement {
                out.push_str(replacement);
                out.push_str(&line[line.trim_end_matches(['\n', '\r']).len()..]);
            }
        }
        out
    }

    /// How the final note names it: `calc.sh:3 `*` → `/``.
    pub fn name(&self) -> String {
        format!("{}:{} {}", self.path, self.line, self.what)
    }
}

/// How the final note names a mutant a mutation tool made of `path`'s line `line`, as the
/// built-in mutator's are: `money.py:7 `True` → `False``, the part of the line that changed
/// from `removed` to `added` (`line removed` when nothing took its place).
pub fn change_name(path: &str, line: usize, removed: Option<&str>, added: Option<&str>) -> String {
    let what = match (removed, added) {
        (Some(old), Some(new)) => {
            let (old, new) = (old.trim(), new.trim());
            let prefix = old
                .char_indices()
                .zip(new.chars())
                .find(|((_, a), b)| a != b)
                .map_or(old.len().min(new.len()), |((i, _), _)| i);
            let (old_rest, new_rest) = (&old[prefix..], &new[prefix.min(new.len())..]);
            let suffix = old_rest
                .chars()
                .rev()
                .zip(new_rest.chars().rev())
                .take_while(|(a, b)| a == b)
                .map(|(a, _)| a.len_utf8())
                .sum::<usize>();
            format!(
                "`{}` → `{}`",
                &old_rest[..old_rest.len() - suffix],
                &new_rest[..new_rest.len() - suffix]
            )
        }
        (Some(_), None) => "line removed".to_string(),
        _ => "changed".to_string(),
    };
    format!("{path}:{line} {what}")
}

/// The lines of `new` (1-based) that `old` does not hold as often: what a change added or
/// rewrote, judged line by line without an alignment (a moved line is not a changed one).
pub fn changed_lines(old: &str, new: &str) -> Vec<usize> {
    let mut left: BTreeMap<&str, usize> = BTreeMap::new();
    for line in old.lines() {
        *left.entry(line).or_default() += 1;
    }
    let mut changed = Vec::new();
    for (i, line) in new.lines().enumerate() {
        match left.get_mut(line) {
            Some(n) if *n > 0 => *n -= 1,
            _ => changed.push(i + 1),
        }
    }
    changed
}

/// The lines of `old` that `new` still holds (as often), in `old`'s order, each ended by a
/// newline: `old` less what a later change took out or rewrote, without what it added.
pub fn lines_kept(old: &str, new: &str) -> String {
    let mut left: BTreeMap<&str, usize> = BTreeMap::new();
    for line in new.lines() {
        *left.entry(line).or_default() += 1;
    }
    let mut kept = String::new();
    for line in old.lines() {
        if let Some(n) = left.get_mut(line).filter(|n| **n > 0) {
            *n -= 1;
            kept.push_str(line);
            kept.push('\n');
        }
    }
    kept
}

/// `new` less the lines it added or rewrote from `old` ([`changed_lines`]) but for those at
/// `added` (1-based lines of `new`), in `new`'s order, each ended by a newline: with no
/// `added`, the lines of `old` that `new` still holds ([`lines_kept`], in `new`'s order).
pub fn lines_kept_with(old: &str, new: &str, added: &[usize]) -> String {
    let changed = changed_lines(old, new);
    let mut kept = String::new();
    for (i, line) in new.lines().enumerate() {
        if !changed.contains(&(i + 1)) || added.contains(&(i + 1)) {
            kept.push_str(line);
            kept.push('\n');
        }
    }
    kept
}

/// Of `items` (in order), those kept by trying them onto the ones kept before: a group is
/// kept where `passes` says the kept items with it pass, else split in halves, each tried
/// in turn, down to one item, which is left out where it fails. At most `tries` calls of
/// `passes`; what is not tried by then is left out. `items` all together is not tried (the
/// caller knows it fails). So an item is left out only where, with the items kept before
/// it, it fails on its own, or the tries ran out: a later task's added test line that
/// fails on an earlier task's code is left out, a line that weakens the test (an `exit 0`
/// on top) passes there and is kept.
pub fn keep_passing<T: Clone, E>(
    items: &[T],
    tries: usize,
    mut passes: impl FnMut(&[T]) -> Result<bool, E>,
) -> Result<Vec<T>, E> {
    let mut kept: Vec<T> = Vec::new();
    let mut queue: std::collections::VecDeque<&[T]> = std::collections::VecDeque::new();
    if items.len() > 1 {
        let (a, b) = items.split_at(items.len() / 2);
        queue.push_back(a);
        queue.push_back(b);
    }
    let mut left = tries;
    while let Some(group) = queue.pop_front() {
        if left == 0 {
            break;
        }
        left -= 1;
        let mut with = kept.clone();
        with.extend_from_slice(group);
        if passes(&with)? {
            kept = with;
        } else if group.len() > 1 {
            let (a, b) = group.split_at(group.len() / 2);
            queue.push_front(b);
            queue.push_front(a);
        }
    }
    Ok(kept)
}

/// Every mutant of `text`'s `lines` (1-based), in a fixed order: by line, then by where in
/// the line, then by kind; the removed line last on each line. Blank and comment lines have
/// none.
pub fn mutants(path: &str, text: &str, lines: &[usize]) -> Vec<Mutant> {
    let shell = is_shell(path, text);
    let python = path.ends_with(".py");
    let mut out = Vec::new();
    let mut wanted: Vec<usize> = lines.to_vec();
    wanted.sort_unstable();
    wanted.dedup();
    let all: Vec<&str> = text.lines().collect();
    for n in wanted {
        let Some(line) = all.get(n.wrapping_sub(1)) else {
            continue;
        };
        let code = line.trim();
        if code.is_empty() || is_comment(code) || code.starts_with("#!") {
            continue;
        }
        let mut seen: Vec<String> = Vec::new();
        let mut push = |what: String, replacement: String| {
            if replacement != *line && !seen.contains(&replacement) {
                seen.push(replacement.clone());
                out.push(Mutant {
                    path: path.to_string(),
                    line: n,
                    what,
                    replacement: Some(replacement),
                });
            }
        };
        for (at, from, to) in swaps(line, shell) {
            let replacement = format!("{}{}{}", &line[..at], to, &line[at + from.len()..]);
            push(format!("`{from}` → `{to}`"), replacement);
        }
        for (at, len, to) in values(line, shell, python) {
            let from = &line[at..at + len];
            let replacement = format!("{}{}{}", &line[..at], to, &line[at + len..]);
            push(format!("`{}` → `{}`", from.trim(), to.trim()), replacement);
        }
        if !is_structural(code) {
            out.push(Mutant {
                path: path.to_string(),
                line: n,
                what: "line removed".into(),
                replacement: None,
            });
        }
    }
    out
}

/// A shell script, by its name or its first line.
fn is_shell(path: &str, text: &str) -> bool {
    path.ends_with(".sh")
        || path.ends_with(".bash")
        || text
            .lines()
            .next()
            .is_some_and(|l| l.starts_with("#!") && (l.ends_with("sh") || l.contains("sh ")))
}

fn is_comment(code: &str) -> bool {
    ["#", "//", "/*", "*", "--", ";"]
        .iter()
        .any(|c| code.starts_with(c))
        && !code.starts_with("*)")
}

/// A line whose removal breaks the file's syntax rather than its behaviour: a lone brace,
/// `esac`, `fi`, `done`, `else` …
fn is_structural(code: &str) -> bool {
    let bare = code.trim_end_matches([';', ',']);
    matches!(
        bare,
        "{" | "}"
            | "("
            | ")"
            | "["
            | "]"
            | "};"
            | "fi"
            | "esac"
            | "done"
            | "do"
            | "then"
            | "else"
            | "end"
            | "in"
    ) || bare.starts_with("case ")
        || bare.starts_with("if ")
        || bare.starts_with("else")
        || bare.starts_with("elif ")
        || bare.starts_with("def ")
        || bare.starts_with("fn ")
        || bare.starts_with("pub fn ")
        || bare.starts_with("function ")
        || bare.ends_with('{')
        || bare.ends_with(':')
}

const OPERATOR: &[u8] = b"<>=!+-*/&|%";

/// The operators of `line` to swap, as (byte offset, operator, its swap). Arithmetic and
/// bare comparisons count only with a space each side (`a * b`), so a path, a flag, a glob
/// or a redirection is not taken for one; shell's `<`/`>` are redirections.
fn swaps(line: &str, shell: bool) -> Vec<(usize, &'static str, &'static str)> {
    const WORDS: &[(&str, &str)] = &[
        ("-lt", "-le"),
        ("-le", "-lt"),
        ("-gt", "-ge"),
        ("-ge", "-gt"),
        ("-eq", "-ne"),
        ("-ne", "-eq"),
    ];
    const SYMBOLS: &[(&str, &str)] = &[
        ("<=", "<"),
        (">=", ">"),
        ("==", "!="),
        ("!=", "=="),
        ("&&", "||"),
        ("||", "&&"),
        ("<", "<="),
        (">", ">="),
        ("+", "-"),
        ("-", "+"),
        ("*", "/"),
        ("/", "*"),
    ];
    let bytes = line.as_bytes();
    let mut out = Vec::new();
    let mut quote: Option<u8> = None;
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if let Some(q) = quote {
            if c == q {
                quote = None;
            }
            i += 1;
            continue;
        }
        if c == b'\'' || (c == b'"' && !shell) {
            quote = Some(c);
            i += 1;
            continue;
        }
        let before = i.checked_sub(1).map(|j| bytes[j]);
        let spaced_before = before.is_none_or(|b| b == b' ' || b == b'\t');
        let mut taken = None;
        if shell && c == b'-' && spaced_before {
            for (from, to) in WORDS {
                let end = i + from.len();
                if line[i..].starts_with(from)
                    && bytes.get(end).is_none_or(|b| *b == b' ' || *b == b'\t')
                {
                    taken = Some((from, to));
                    break;
                }
            }
        }
        if taken.is_none() && OPERATOR.contains(&c) {
            for (from, to) in SYMBOLS {
                if !line[i..].starts_with(from) {
                    continue;
                }
                let end = i + from.len();
                let after = bytes.get(end).copied();
                let spaced_after = after.is_none_or(|b| b == b' ' || b == b'\t');
                let glued = before.is_some_and(|b| OPERATOR.contains(&b))
                    || after.is_some_and(|b| OPERATOR.contains(&b));
                let single = from.len() == 1;
                let redirect = shell && (from.starts_with('<') || from.starts_with('>'));
                if glued || redirect || (single && !(spaced_before && spaced_after)) {
                    break;
                }
                taken = Some((from, to));
                break;
            }
        }
        match taken {
            Some((from, to)) => {
                out.push((i, *from, *to));
                i += from.len();
            }
            None => i += 1,
        }
    }
    out
}

/// The constants and returned or printed values of `line` to change, as (byte offset,
/// length, what replaces it): `true`↔`false`, `0`→`1`, `n`→`n+1`, `return x`→`return 0`
/// (`None` in Python), `echo x`→`echo 0` and `echo`, `print(x)`→`print(0)`.
fn values(line: &str, shell: bool, python: bool) -> Vec<(usize, usize, String)> {
    let bytes = line.as_bytes();
    let mut out = Vec::new();
    let word_char = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'$' || b == b'.';
    let mut i = 0;
    while i < bytes.len() {
        let starts = i == 0 || !word_char(bytes[i - 1]);
        if !starts || !(bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
            i += 1;
            continue;
        }
        let end = (i..bytes.len())
            .find(|&j| !(bytes[j].is_ascii_alphanumeric() || bytes[j] == b'_'))
            .unwrap_or(bytes.len());
        let word = &line[i..end];
        let glued = bytes.get(end).is_some_and(|b| *b == b'.' || *b == b'$');
        let swapped = match word {
            "true" => Some("false".to_string()),
            "false" => Some("true".to_string()),
            "True" => Some("False".to_string()),
            "False" => Some("True".to_string()),
            _ if !glued && word.bytes().all(|b| b.is_ascii_digit()) && word.len() < 19 => {
                word.parse::<u64>().ok().map(|n| match n {
                    0 => "1".to_string(),
                    1 => "0".to_string(),
                    n => (n + 1).to_string(),
                })
            }
            _ => None,
        };
        if let Some(to) = swapped {
            out.push((i, word.len(), to));
        }
        if word == "return" {
            let rest = end + line[end..].len() - line[end..].trim_start().len();
            let stop = value_end(line, rest, shell);
            let value = line[rest..stop].trim_end();
            let zero = if python { "None" } else { "0" };
            if !value.is_empty() && value != zero {
                out.push((rest, value.len(), zero.to_string()));
            }
        }
        if shell && (word == "echo" || word == "printf") && end < bytes.len() && bytes[end] == b' '
        {
            let rest = end + 1;
            let stop = value_end(line, rest, shell);
            let value = line[rest..stop].trim_end();
            if !value.is_empty() {
                if value != "0" {
                    out.push((rest, value.len(), "0".to_string()));
                }
                // `echo` alone: the value gone, the line still a statement.
                out.push((end, 1 + value.len(), String::new()));
            }
        }
        if (word == "print" || word == "println")
            && bytes.get(end) == Some(&b'(')
            && let Some(close) = matching_paren(line, end)
        {
            let inner = &line[end + 1..close];
            if !inner.trim().is_empty() && inner.trim() != "0" {
                out.push((end + 1, inner.len(), "0".to_string()));
            }
        }
        i = end;
    }
    out
}

/// Where the value that starts at `from` ends: at the statement's end (`;`, a shell `|`,
/// `&` or redirection, a comment) or the line's.
fn value_end(line: &str, from: usize, shell: bool) -> usize {
    let bytes = line.as_bytes();
    let mut depth = 0i32;
    let mut quote: Option<u8> = None;
    for (j, &b) in bytes.iter().enumerate().skip(from) {
        if let Some(q) = quote {
            if b == q {
                quote = None;
            }
            continue;
        }
        match b {
            b'\'' | b'"' => quote = Some(b),
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => {
                if depth == 0 {
                    return j;
                }
                depth -= 1;
            }
            b';' if depth == 0 => return j,
            b'|' | b'&' | b'>' | b'<' | b'#' if shell && depth == 0 => return j,
            _ => {}
        }
    }
    bytes.len()
}

fn matching_paren(line: &str, open: usize) -> Option<usize> {
    let mut depth = 0i32;
    for (j, b) in line.bytes().enumerate().skip(open) {
        match b {
            b'(' => depth += 1,
            b')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(j);
                }
            }
            _ => {}
        }
    }
    None
}

/// Whether `after`, a mutant of the data file `path` (`.json`, `.toml`, not code by its
/// kind), no longer parses where `before` did: a broken configuration fails every run that
/// reads it, so such a mutant is "killed" by any test and says nothing of it; the mutator
/// drops it, where counted it would pad the share (docs/integrity.md, "Adequacy by
/// mutation"). A file of another kind, or one that did not parse before, keeps every mutant.
pub fn breaks_data_syntax(path: &str, before: &str, after: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path).to_ascii_lowercase();
    let parses = |text: &str| -> Option<bool> {
        if name.ends_with(".json") {
            Some(serde_json::from_str::<serde_json::Value>(text).is_ok())
        } else if name.ends_with(".toml") {
            Some(text.parse::<toml::Table>().is_ok())
        } else {
            None
        }
    };
    parses(before) == Some(true) && parses(after) == Some(false)
}

/// Which of `mutants` (in the mutator's order) are run within a budget of `budget`: the
/// first mutant of every file before the second of any, then the first of every changed
/// line before the second of any (by line, in order), then the second, and so on; those kept
/// stay in the mutator's order. Lines padded with easily killed mutants would otherwise spend
/// the budget before the rest of the code has one, and a file padded so would leave another
/// file with none run (docs/integrity.md, "Adequacy by mutation").
pub fn within_budget(mutants: &[Mutant], budget: usize) -> Vec<bool> {
    let keys: Vec<(&str, Option<usize>)> = mutants
        .iter()
        .map(|m| (m.path.as_str(), Some(m.line)))
        .collect();
    budget_keeps(&keys, budget)
}

/// [`within_budget`] for mutants known by their file and line (`None`: a tool's, whose line
/// is not known here), in the order they were made: every file's first before any file's
/// second, then each line's first before any line's second; a mutant of no known line
/// follows the first of its file in the order made.
pub fn budget_keeps(keys: &[(&str, Option<usize>)], budget: usize) -> Vec<bool> {
    let mut rank = Vec::with_capacity(keys.len());
    let mut files: BTreeMap<&str, ()> = BTreeMap::new();
    let mut seen: BTreeMap<(&str, usize), usize> = BTreeMap::new();
    for &(path, line) in keys {
        let first_of_file = files.insert(path, ()).is_none();
        let n = match line {
            Some(line) => {
                let n = seen.entry((path, line)).or_default();
                *n += 1;
                *n
            }
            None => 1,
        };
        // Every file's first mutant ranks 0, before the first of any other line (1).
        rank.push(if first_of_file { 0 } else { n });
    }
    let mut order: Vec<usize> = (0..keys.len()).collect();
    order.sort_by_key(|&i| (rank[i], i));
    let mut keep = vec![false; keys.len()];
    for i in order.into_iter().take(budget) {
        keep[i] = true;
    }
    keep
}

/// `text`, the program at `path`, written otherwise: a shell script or a Python module that
/// runs the same code from an encoded copy of its text (`eval` of `printf`'s octal escapes;
/// `exec` of `bytes.fromhex`), its `#!` line kept; `None` for any other kind of file. A test
/// that checks what the code does passes on it as on the code; one that checks the code's
/// text (a `grep` of the line a task wrote, a checksum) fails, and so kills every mutant of
/// that text without running it (docs/integrity.md, "Adequacy by mutation").
pub fn written_otherwise(path: &str, text: &str) -> Option<String> {
    let name = path.rsplit('/').next().unwrap_or(path);
    let ext = name
        .rsplit_once('.')
        .filter(|(stem, _)| !stem.is_empty())
        .map(|(_, ext)| ext.to_ascii_lowercase());
    let first = text.lines().next().unwrap_or("");
    let interpreter = first.strip_prefix("#!").map(|line| {
        let mut words = line
            .split_whitespace()
            .map(|w| w.rsplit('/').next().unwrap_or(w));
        match words.next() {
            Some("env") => words.find(|w| !w.starts_with('-')).unwrap_or(""),
            other => other.unwrap_or(""),
        }
    });
    let shebang = match first.starts_with("#!") {
        true => format!("{first}\n"),
        false => String::new(),
    };
    let kind = match (interpreter, ext.as_deref()) {
        (Some("sh" | "bash" | "dash"), _) | (None, Some("sh" | "bash")) => "sh",
        (Some(p), _) if p.starts_with("python") => "py",
        (None, Some("py")) => "py",
        _ => return None,
    };
    let run = match kind {
        "sh" => {
            let octal: String = text.bytes().map(|b| format!("\\{b:03o}")).collect();
            format!("eval \"$(printf '{octal}')\"\n")
        }
        _ => {
            // Bytes to `compile`, which reads a byte-order mark or a coding line itself; the
            // file's name where the module has none (`exec(open(path).read(), ns)`).
            let hex =
                |bytes: &[u8]| -> String { bytes.iter().map(|b| format!("{b:02x}")).collect() };
            format!(
                "exec(compile(bytes.fromhex('{}'), globals().get('__file__', \
                 bytes.fromhex('{}').decode('utf-8', 'surrogateescape')), 'exec'))\n",
                hex(text.as_bytes()),
                hex(path.as_bytes())
            )
        }
    };
    // Its comment lines stay as they are, after it: a test may look for a mark in a comment,
    // and no mutant changes one (comment lines have none), so no kill rests on them.
    let comments: String = text
        .lines()
        .skip(usize::from(!shebang.is_empty()))
        .filter(|l| l.trim_start().starts_with('#'))
        .map(|l| format!("{l}\n"))
        .collect();
    Some(format!("{shebang}{run}{comments}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shell_script_or_python_module_is_written_otherwise_and_nothing_else_is() {
        assert_eq!(
            written_otherwise("calc.sh", "a\n  # done\n").as_deref(),
            Some(
                "eval \"$(printf '\\141\\012\\040\\040\\043\\040\\144\\157\\156\\145\\012')\"\n  # done\n"
            )
        );
        assert_eq!(
            written_otherwise("bin/run", "#!/usr/bin/env bash\n").as_deref(),
            Some(
                "#!/usr/bin/env bash\neval \"$(printf '\\043\\041\\057\\165\\163\\162\\057\\142\\151\\156\\057\\145\\156\\166\\040\\142\\141\\163\\150\\012')\"\n"
            )
        );
        assert_eq!(
            written_otherwise("m/money.py", "x = 1\n").as_deref(),
            Some(
                "exec(compile(bytes.fromhex('78203d20310a'), globals().get('__file__', \
                 bytes.fromhex('6d2f6d6f6e65792e7079').decode('utf-8', 'surrogateescape')), \
                 'exec'))\n"
            )
        );
        assert_eq!(written_otherwise("calc.js", "x\n"), None);
        assert_eq!(written_otherwise("README.md", "x\n"), None);
        assert_eq!(written_otherwise("tool", "#!/usr/bin/perl\n"), None);
    }

    #[test]
    fn the_budget_takes_the_first_mutant_of_every_line_before_the_second_of_any() {
        let m = |path: &str, line: usize, what: &str| Mutant {
            path: path.into(),
            line,
            what: what.into(),
            replacement: None,
        };
        // Line 1 padded with three mutants, line 2 with one, another file's line 1 with two.
        let all = [
            m("a.sh", 1, "a"),
            m("a.sh", 1, "b"),
            m("a.sh", 1, "c"),
            m("a.sh", 2, "d"),
            m("b.sh", 1, "e"),
            m("b.sh", 1, "f"),
        ];
        let kept = |budget| {
            within_budget(&all, budget)
                .iter()
                .zip(&all)
                .filter(|(k, _)| **k)
                .map(|(_, m)| m.what.as_str())
                .collect::<Vec<_>>()
        };
        assert_eq!(kept(0), Vec::<&str>::new());
        // Each file's first before any file's second.
        assert_eq!(kept(2), ["a", "e"]);
        assert_eq!(kept(3), ["a", "d", "e"]);
        assert_eq!(kept(4), ["a", "b", "d", "e"]);
        assert_eq!(kept(5), ["a", "b", "d", "e", "f"]);
        assert_eq!(kept(9), ["a", "b", "c", "d", "e", "f"]);
    }

    #[test]
    fn a_file_padded_with_lines_does_not_starve_another_file_of_the_budget() {
        let m = |path: &str, line: usize| Mutant {
            path: path.into(),
            line,
            what: format!("{path}:{line}"),
            replacement: None,
        };
        // Ten padded lines of a.sh, two mutants each, then one line of b.sh, then c.sh.
        let mut all: Vec<Mutant> = (1..=10)
            .flat_map(|l| [m("a.sh", l), m("a.sh", l)])
            .collect();
        all.push(m("b.sh", 1));
        all.push(m("b.sh", 1));
        all.push(m("c.sh", 4));
        let kept = |budget| {
            within_budget(&all, budget)
                .iter()
                .zip(&all)
                .filter(|(k, _)| **k)
                .map(|(_, m)| m.what.clone())
                .collect::<Vec<_>>()
        };
        assert_eq!(kept(3), ["a.sh:1", "b.sh:1", "c.sh:4"]);
        // Then a line's first, by line, before a line's second.
        assert_eq!(kept(5), ["a.sh:1", "a.sh:2", "a.sh:3", "b.sh:1", "c.sh:4"]);
        // The same every time, whatever the budget: a larger budget keeps what a smaller kept.
        for budget in 0..all.len() {
            let (small, large) = (within_budget(&all, budget), within_budget(&all, budget + 1));
            assert!(small.iter().zip(&large).all(|(s, l)| !s || *l), "{budget}");
            assert_eq!(small.iter().filter(|k| **k).count(), budget);
        }
        // A tool's mutants (no line known): each file's first, then the tool's order.
        let tool = [
            ("x.py", None),
            ("x.py", None),
            ("x.py", None),
            ("y.py", None),
        ];
        assert_eq!(budget_keeps(&tool, 2), [true, false, false, true]);
        assert_eq!(budget_keeps(&tool, 3), [true, true, false, true]);
    }

    #[test]
    fn a_mutant_that_leaves_a_json_or_toml_file_unreadable_is_dropped() {
        let json = "{\n  \"factor\": 2,\n  \"name\": \"calc\"\n}\n";
        let kept = |path: &str, text: &str| -> Vec<String> {
            mutants(path, text, &(1..=text.lines().count()).collect::<Vec<_>>())
                .into_iter()
                .filter(|m| !breaks_data_syntax(path, text, &m.apply(text)))
                .map(|m| m.name())
                .collect()
        };
        // The constant changed and the first key removed stay; the last key removed leaves a
        // trailing comma, which no JSON reader takes.
        assert_eq!(
            kept("conf/calc.json", json),
            [
                "conf/calc.json:2 `2` → `3`",
                "conf/calc.json:2 line removed"
            ]
        );
        let toml = "factors = [\n  2,\n  3,\n]\n";
        assert_eq!(
            kept("calc.toml", toml),
            [
                "calc.toml:2 `2` → `3`",
                "calc.toml:2 line removed",
                "calc.toml:3 `3` → `4`",
                "calc.toml:3 line removed"
            ]
        );
        // Unreadable before: not judged; another kind: not judged.
        assert!(!breaks_data_syntax("a.json", "{", "}"));
        assert!(!breaks_data_syntax("a.sh", "echo 1", "echo ("));
        assert!(breaks_data_syntax("A.JSON", "{}", "{"));
        assert!(breaks_data_syntax("p/Cargo.toml", "a = 1", "a = "));
    }

    const CALC: &str = "#!/bin/sh\n# a calculator\ncase \"$1\" in\n  add) echo $(( $2 + $3 ));;\n  mul) echo $(( $2 * $3 ));;\n  *) echo \"usage\" >&2; exit 2;;\nesac\n";

    fn names(path: &str, text: &str, lines: &[usize]) -> Vec<String> {
        mutants(path, text, lines)
            .iter()
            .map(|m| {
                format!(
                    "{} => {}",
                    m.name(),
                    m.apply(text).lines().nth(m.line - 1).unwrap_or("")
                )
            })
            .collect()
    }

    #[test]
    fn the_shell_calculators_mul_line_has_its_operator_its_value_and_its_removal() {
        let got = mutants("calc.sh", CALC, &[5]);
        let whats: Vec<&str> = got.iter().map(|m| m.what.as_str()).collect();
        assert_eq!(
            whats,
            vec![
                "`*` → `/`",
                "`$(( $2 * $3 ))` → `0`",
                "`$(( $2 * $3 ))` → ``",
                "line removed"
            ],
            "{:?}",
            names("calc.sh", CALC, &[5])
        );
        assert_eq!(
            got[0].apply(CALC).lines().nth(4),
            Some("  mul) echo $(( $2 / $3 ));;")
        );
        assert_eq!(got[1].apply(CALC).lines().nth(4), Some("  mul) echo 0;;"));
        assert_eq!(got[2].apply(CALC).lines().nth(4), Some("  mul) echo;;"));
        assert_eq!(got[3].apply(CALC).lines().count(), CALC.lines().count() - 1);
    }

    #[test]
    fn lines_not_changed_blank_or_comments_have_no_mutant() {
        assert!(mutants("calc.sh", CALC, &[]).is_empty());
        assert!(mutants("calc.sh", CALC, &[2]).is_empty());
        assert!(mutants("calc.sh", CALC, &[99]).is_empty());
        // The catch-all's glob and redirection are not operators.
        let catch_all = mutants("calc.sh", CALC, &[6]);
        assert!(
            catch_all.iter().all(|m| !m.what.contains('*')),
            "{catch_all:?}"
        );
        assert!(
            catch_all.iter().all(|m| !m.what.contains('>')),
            "{catch_all:?}"
        );
    }

    #[test]
    fn comparisons_constants_and_returns_are_swapped() {
        let text = "if [ \"$n\" -lt 10 ]; then\n  ok=true\nfi\n";
        let whats: Vec<String> = mutants("t.sh", text, &[1, 2])
            .into_iter()
            .map(|m| m.what)
            .collect();
        assert!(whats.contains(&"`-lt` → `-le`".to_string()), "{whats:?}");
        assert!(whats.contains(&"`10` → `11`".to_string()), "{whats:?}");
        assert!(whats.contains(&"`true` → `false`".to_string()), "{whats:?}");
        let py = "def f(a, b):\n    if a <= b:\n        return a == 0\n    print(a)\n";
        let whats: Vec<String> = mutants("f.py", py, &[2, 3, 4])
            .into_iter()
            .map(|m| m.what)
            .collect();
        for want in [
            "`<=` → `<`",
            "`==` → `!=`",
            "`0` → `1`",
            "`a == 0` → `None`",
            "`a` → `0`",
        ] {
            assert!(
                whats.contains(&want.to_string()),
                "{want} missing from {whats:?}"
            );
        }
    }

    #[test]
    fn changed_lines_are_those_the_old_text_lacks() {
        assert_eq!(changed_lines("a\nb\n", "a\nc\nb\nb\n"), vec![2, 4]);
        assert_eq!(changed_lines("", "x\n"), vec![1]);
    }

    #[test]
    fn lines_kept_are_the_old_lines_the_new_text_holds_without_its_additions() {
        // An assertion rewritten to check nothing: taken out; a test added: not put in.
        let old = "a\n[ \"$(f 99)\" = 0 ]\nb\nb\n";
        let new = "a\nf 99 >/dev/null\nb\n[ \"$(g 1)\" = 2 ]\n";
        assert_eq!(lines_kept(old, new), "a\nb\n");
        assert_eq!(lines_kept("x\ny", "y\nx\n"), "x\ny\n");
        assert_eq!(lines_kept("x\n", ""), "");
    }

    #[test]
    fn lines_kept_with_puts_back_the_added_lines_asked_for() {
        let old = "a\n[ \"$(f 99)\" = 0 ]\nb\nb\n";
        let new = "exit 0\na\nf 99 >/dev/null\nb\n[ \"$(g 1)\" = 2 ]\n";
        assert_eq!(lines_kept_with(old, new, &[]), "a\nb\n");
        assert_eq!(lines_kept_with(old, new, &[1]), "exit 0\na\nb\n");
        assert_eq!(lines_kept_with(old, new, &[1, 3, 5]), new);
        // A line `old` holds is never one of the added (2 is `a`).
        assert_eq!(lines_kept_with(old, new, &[2]), "a\nb\n");
    }

    #[test]
    fn keep_passing_leaves_out_only_what_fails_with_what_was_kept_before_it() {
        // 9 fails on its own; 0 (an `exit 0` on top) makes everything after it pass.
        let fails = |with: &[u32]| -> Result<bool, ()> {
            let shielded = with.first() == Some(&0);
            Ok(shielded || !with.contains(&9))
        };
        assert_eq!(keep_passing(&[1, 9, 2, 3], 16, fails), Ok(vec![1, 2, 3]));
        assert_eq!(keep_passing(&[9, 0, 1], 16, fails), Ok(vec![0, 1]));
        // All kept where the first is the `exit 0`: the halves pass (all together is not
        // tried).
        assert_eq!(keep_passing(&[0, 9], 16, fails), Ok(vec![0, 9]));
        // One alone is the whole: not tried, left out.
        assert_eq!(keep_passing(&[1], 16, fails), Ok(vec![]));
        // Tries run out (`[1, 9, 2]` failed, `[1]` passed): what is left is left out.
        let mut calls = 0;
        let kept = keep_passing(&[1, 9, 2, 3, 4, 5], 2, |with: &[u32]| {
            calls += 1;
            fails(with)
        });
        assert_eq!((kept, calls), (Ok(vec![1]), 2));
        // An error stops it.
        assert_eq!(keep_passing(&[1, 2], 4, |_: &[u32]| Err("run")), Err("run"));
    }

    proptest::proptest! {
        /// Every mutant differs from its source in exactly one line, a changed one; the
        /// order is the same each time.
        #[test]
        fn every_mutant_differs_in_exactly_one_changed_line(
            lines in proptest::collection::vec(
                "[a-z0-9 +*/<>=!$()\"';|&_-]{0,24}|return [a-z0-9]{1,4}|echo [$a-z0-9]{1,6}|true|[0-9]{1,3}|  x -lt 3",
                1..12,
            ),
            picks in proptest::collection::vec(0usize..14, 0..8),
            shell in proptest::bool::ANY,
        ) {
            let text = lines.join("\n") + "\n";
            let path = if shell { "p.sh" } else { "p.py" };
            let got = mutants(path, &text, &picks);
            proptest::prop_assert_eq!(&got, &mutants(path, &text, &picks));
            let source: Vec<&str> = text.lines().collect();
            for m in &got {
                proptest::prop_assert!(picks.contains(&m.line));
                let mutated = m.apply(&text);
                proptest::prop_assert_ne!(&mutated, &text);
                let out: Vec<&str> = mutated.lines().collect();
                let mut expected: Vec<&str> = source.clone();
                match &m.replacement {
                    Some(r) => expected[m.line - 1] = r.as_str(),
                    None => { expected.remove(m.line - 1); }
                }
                proptest::prop_assert_eq!(&out, &expected);
                if m.replacement.is_some() {
                    let differing = source.iter().zip(&out).filter(|(a, b)| a != b).count();
                    proptest::prop_assert_eq!(differing, 1);
                }
            }
        }
    }
}
