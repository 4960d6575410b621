//! cargo-mutants (27.x) as the adequacy check's mutant maker for Rust (docs/integrity.md,
//! "Adequacy by mutation"): the arguments its listing runs with, the texts it is given (what
//! the PR wrote to make it skip a function neutralised), and its JSON listing read back into
//! mutants of the lines a task changed, each applied to the file's text and named. Pure: the
//! engine runs cargo-mutants.

use serde_json::Value;

/// Whether `path` is Rust by its name: a task whose code files all end so is cargo-mutants'
/// under `[verify] mutation_tool = "auto"`.
pub fn is_rust(path: &str) -> bool {
    path.ends_with(".rs")
}

/// The identifier cargo-mutants reads `mutants::skip` by, and what it becomes in the texts it
/// lists: as many characters, so every line and column it reports is the same in the text
/// the task wrote.
const SKIP_CRATE: &str = "mutants";
const NEUTRAL: &str = "mutant_";

/// What a listing lists: the mutants, or the files cargo-mutants reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Listing {
    Mutants,
    Files,
}

/// The arguments after `cargo-mutants` that list, without building, the mutants of `paths`
/// (relative to the worktree), or which of them it reads, as JSON: `mutants` (the subcommand
/// cargo passes its plugins), every package of the workspace, no `.cargo/mutants.toml` of the
/// PR's read (its `exclude_globs`, `exclude_re` and `skip_calls` could leave the changed
/// lines unmutated), and each path as an `--file` glob. `Err(why)`: a path the glob would
/// read as a pattern.
pub fn list_args(listing: Listing, paths: &[&str]) -> Result<Vec<String>, String> {
    let list = match listing {
        Listing::Mutants => "--list",
        Listing::Files => "--list-files",
    };
    let mut args: Vec<String> = ["mutants", list, "--json", "--no-config", "--workspace"]
        .map(String::from)
        .to_vec();
    for path in paths {
        if let Some(c) = path.chars().find(|c| "*?[]{}!\\".contains(*c)) {
            return Err(format!(
                "cargo-mutants would read `{c}` in {path} as a pattern, not a file name"
            ));
        }
        args.push("--file".into());
        args.push((*path).to_string());
    }
    Ok(args)
}

/// `text` as cargo-mutants is given it: every identifier `mutants` renamed (to `mutant_`, as
/// long), so no `#[mutants::skip]`, `#[cfg_attr(…, mutants::skip)]` or `#![mutants::skip]` of
/// the PR's makes it skip a function, an impl or the file. The text is only listed, never
/// built: the mutants are applied to the text the task wrote.
pub fn neutral(text: &str) -> String {
    rename(text, SKIP_CRATE, NEUTRAL)
}

/// `text` with each whole identifier `from` made `to`.
fn rename(text: &str, from: &str, to: &str) -> String {
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(from) {
        // What precedes it: this piece's text, or at its start what was already written.
        let before = rest[..at]
            .chars()
            .next_back()
            .or_else(|| out.chars().next_back());
        let after = rest[at + from.len()..].chars().next();
        out.push_str(&rest[..at]);
        if before.is_some_and(ident) || after.is_some_and(ident) {
            out.push_str(from);
        } else {
            out.push_str(to);
        }
        rest = &rest[at + from.len()..];
    }
    out.push_str(rest);
    out
}

/// The paths of cargo-mutants' JSON listing of the files it reads (`--list-files`): those a
/// `mod` reaches from a target's root (not one `include!` brings in, whose lines it never
/// mutates). `Err`: the text is not such a listing.
pub fn files_read(listing: &str) -> Result<Vec<String>, String> {
    let listing: Value = serde_json::from_str(listing)
        .map_err(|e| format!("cargo-mutants' listing of files is not JSON: {e}"))?;
    listing
        .as_array()
        .and_then(|files| {
            files
                .iter()
                .map(|f| f["path"].as_str().map(String::from))
                .collect()
        })
        .ok_or_else(|| "cargo-mutants' listing of files is not a list of paths".to_string())
}

/// The files cargo-mutants' JSON listing of mutants lists a mutant of, in its order, each
/// once. `Err`: the text is not such a listing.
pub fn mutated_paths(listing: &str) -> Result<Vec<String>, String> {
    let mut out: Vec<String> = Vec::new();
    for m in read_listing(listing)? {
        if !out.contains(&m.path) {
            out.push(m.path);
        }
    }
    Ok(out)
}

/// One mutant of cargo-mutants' listing: the text `replacement` in place of the span from
/// `start` to `end` (1-based lines and columns, the end one past the span, columns counted in
/// characters, a `\r` not counted, as cargo-mutants counts them).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mutant {
    pub path: String,
    pub genre: String,
    pub replacement: String,
    pub start: (usize, usize),
    pub end: (usize, usize),
}

/// The mutants of cargo-mutants' JSON listing of `files` (each its path, its text as the task
/// wrote it, and its changed lines, 1-based) whose span touches a changed line: file by file
/// in `files`' order, in each by place, then replacement. `Err`: the text is not such a
/// listing.
pub fn mutants(listing: &str, files: &[(&str, &str, &[usize])]) -> Result<Vec<Mutant>, String> {
    let read = read_listing(listing)?;
    let mut out = Vec::new();
    for (path, _, lines) in files {
        let mut of_file: Vec<Mutant> = read
            .iter()
            .filter(|m| m.path == *path && lines.iter().any(|l| (m.start.0..=m.end.0).contains(l)))
            .cloned()
            .collect();
        of_file.sort_by(|a, b| {
            (a.start, a.end, &a.replacement, &a.genre).cmp(&(
                b.start,
                b.end,
                &b.replacement,
                &b.genre,
            ))
        });
        of_file
            .dedup_by(|a, b| (a.start, a.end, &a.replacement) == (b.start, b.end, &b.replacement));
        out.extend(of_file);
    }
    Ok(out)
}

/// Every mutant of cargo-mutants' JSON listing, in its order.
fn read_listing(listing: &str) -> Result<Vec<Mutant>, String> {
    let listing: Value = serde_json::from_str(listing)
        .map_err(|e| format!("cargo-mutants' listing is not JSON: {e}"))?;
    let Some(listed) = listing.as_array() else {
        return Err("cargo-mutants' listing is not a list of mutants".into());
    };
    let mut read = Vec::new();
    for m in listed {
        let position = |key: &str| -> Option<(usize, usize)> {
            let at = &m["span"][key];
            Some((
                usize::try_from(at["line"].as_u64()?).ok()?,
                usize::try_from(at["column"].as_u64()?).ok()?,
            ))
        };
        let (Some(path), Some(replacement), Some(start), Some(end)) = (
            m["file"].as_str(),
            m["replacement"].as_str(),
            position("start"),
            position("end"),
        ) else {
            return Err(
                "cargo-mutants' listing holds a mutant without its file, place or replacement"
                    .into(),
            );
        };
        read.push(Mutant {
            path: path.to_string(),
            genre: m["genre"].as_str().unwrap_or("").to_string(),
            // A type the PR named in a `mutants` module is named so again.
            replacement: rename(replacement, NEUTRAL, SKIP_CRATE),
            start,
            end,
        });
    }
    Ok(read)
}

impl Mutant {
    /// `text` with this mutant in it; `None` when its span is not in `text`.
    pub fn apply(&self, text: &str) -> Option<String> {
        let (from, to) = self.span(text)?;
        Some(format!(
            "{}{}{}",
            &text[..from],
            self.replacement,
            &text[to..]
        ))
    }

    /// How the final note names it, as the other tools' are: `src/lib.rs:6 `*` → `+``, the
    /// span's text and its replacement (a span of several lines by its first and last: `src/
    /// lib.rs:2 `if a { … }` → `0``); the genre where the span is not in `text`.
    pub fn name(&self, text: &str) -> String {
        match self.span(text) {
            Some((from, to)) => format!(
                "{}:{} `{}` → `{}`",
                self.path,
                self.start.0,
                ends(&text[from..to]),
                ends(&self.replacement)
            ),
            None => format!("{}:{} {}", self.path, self.start.0, self.genre),
        }
    }

    /// The byte range of the span in `text`.
    fn span(&self, text: &str) -> Option<(usize, usize)> {
        let (from, to) = (offset(text, self.start)?, offset(text, self.end)?);
        (from <= to).then_some((from, to))
    }
}

/// A text of several lines by its first and last, trimmed: `{ … }`.
fn ends(text: &str) -> String {
    let lines: Vec<&str> = text.lines().map(str::trim).collect();
    match lines.as_slice() {
        [first, .., last] => format!("{first} … {last}"),
        _ => text.trim().to_string(),
    }
}

/// The byte offset in `text` of a 1-based line and 1-based column in characters, a `\r` not
/// counted (one past the line's last character is its end). `None` when it is not in `text`.
fn offset(text: &str, (line, column): (usize, usize)) -> Option<usize> {
    if line == 0 {
        return None;
    }
    let mut start = 0;
    for _ in 1..line {
        start += text[start..].find('\n')? + 1;
    }
    let own = &text[start..];
    let own = &own[..own.find('\n').unwrap_or(own.len())];
    let mut at = 1;
    for (i, c) in own.char_indices() {
        if at == column && c != '\r' {
            return Some(start + i);
        }
        if c != '\r' {
            at += 1;
        }
    }
    // One past the last character: before a `\r` that ends the line, as its end.
    (at == column).then(|| start + own.strip_suffix('\r').unwrap_or(own).len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use proptest::prelude::*;

    const LIB: &str = "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n\n\
        #[cfg_attr(never, mutants::skip)]\npub fn mul(a: i32, b: i32) -> i32 {\n    a * b\n}\n";

    /// cargo-mutants 27.1.0's listing of LIB, neutralised (trimmed: three of its ten mutants,
    /// out of place order, and their diffs), and a mutant of another file.
    const LISTING: &str = r#"[
      {"file": "src/lib.rs", "function": {"function_name": "mul", "return_type": "-> i32", "span": {"end": {"column": 2, "line": 8}, "start": {"column": 1, "line": 5}}}, "genre": "BinaryOperator", "name": "src/lib.rs:7:7: replace * with + in mul", "package": "calc", "replacement": "+", "span": {"end": {"column": 8, "line": 7}, "start": {"column": 7, "line": 7}}},
      {"file": "src/lib.rs", "function": {"function_name": "mul", "return_type": "-> i32", "span": {"end": {"column": 2, "line": 8}, "start": {"column": 1, "line": 5}}}, "genre": "FnValue", "name": "src/lib.rs:7:5: replace mul -> i32 with 0", "package": "calc", "replacement": "0", "span": {"end": {"column": 10, "line": 7}, "start": {"column": 5, "line": 7}}},
      {"file": "src/lib.rs", "function": {"function_name": "add", "return_type": "-> i32", "span": {"end": {"column": 2, "line": 3}, "start": {"column": 1, "line": 1}}}, "genre": "BinaryOperator", "name": "src/lib.rs:2:7: replace + with - in add", "package": "calc", "replacement": "-", "span": {"end": {"column": 8, "line": 2}, "start": {"column": 7, "line": 2}}},
      {"file": "src/other.rs", "genre": "FnValue", "replacement": "()", "span": {"end": {"column": 2, "line": 7}, "start": {"column": 1, "line": 7}}}
    ]"#;

    #[test]
    fn the_changed_lines_mutants_are_kept_in_place_order_and_applied() {
        let kept = mutants(LISTING, &[("src/lib.rs", LIB, &[5, 6, 7, 8])]).unwrap();
        let named: Vec<String> = kept.iter().map(|m| m.name(LIB)).collect();
        assert_eq!(
            named,
            ["src/lib.rs:7 `a * b` → `0`", "src/lib.rs:7 `*` → `+`"]
        );
        assert_eq!(kept[0].apply(LIB).unwrap(), LIB.replace("a * b", "0"));
        assert_eq!(kept[1].apply(LIB).unwrap(), LIB.replace("a * b", "a + b"));
        assert_eq!(mutants(LISTING, &[("src/lib.rs", LIB, &[4])]).unwrap(), []);
        assert_eq!(mutants(LISTING, &[("absent.rs", "", &[1])]).unwrap(), []);
        let both = mutants(
            LISTING,
            &[("src/other.rs", "", &[7]), ("src/lib.rs", LIB, &[2])],
        );
        assert_eq!(
            both.unwrap()
                .iter()
                .map(|m| m.path.as_str())
                .collect::<Vec<_>>(),
            ["src/other.rs", "src/lib.rs"]
        );
    }

    #[test]
    fn a_listing_that_is_not_one_is_an_error() {
        assert_eq!(
            mutants("not json", &[]).unwrap_err(),
            "cargo-mutants' listing is not JSON: expected ident at line 1 column 2"
        );
        assert_eq!(
            mutants("{}", &[]).unwrap_err(),
            "cargo-mutants' listing is not a list of mutants"
        );
        assert_eq!(
            mutants(r#"[{"file": "a.rs", "replacement": "0"}]"#, &[]).unwrap_err(),
            "cargo-mutants' listing holds a mutant without its file, place or replacement"
        );
    }

    #[test]
    fn columns_count_characters_and_not_a_carriage_return() {
        let m = |line, start, end| Mutant {
            path: "a.rs".into(),
            genre: "BinaryOperator".into(),
            replacement: "-".into(),
            start: (line, start),
            end: (line, end),
        };
        // é and 😀 are one column each.
        let text = "let s = \"é😀\" + x;\r\nlet y = a + b;\r\n";
        assert_eq!(
            m(1, 14, 15).apply(text).unwrap(),
            text.replacen('+', "-", 1)
        );
        assert_eq!(
            m(2, 11, 12).apply(text).unwrap(),
            "let s = \"é😀\" + x;\r\nlet y = a - b;\r\n"
        );
        assert_eq!(
            m(2, 15, 15).apply(text).unwrap(),
            "let s = \"é😀\" + x;\r\nlet y = a + b;-\r\n",
            "one past the line's end, before its \\r"
        );
        assert_eq!(m(2, 16, 16).apply(text), None);
        assert_eq!(m(3, 1, 1).apply(text).unwrap(), format!("{text}-"));
        assert_eq!(m(4, 1, 1).apply(text), None);
        assert_eq!(m(0, 1, 1).apply(text), None);
        assert_eq!(m(1, 5, 4).apply(text), None);
        assert_eq!(m(1, 5, 4).name(text), "a.rs:1 BinaryOperator");
    }

    #[test]
    fn the_prs_skip_attribute_is_renamed_keeping_every_column() {
        let listed = neutral(LIB);
        assert_eq!(listed, LIB.replace("mutants::skip", "mutant_::skip"));
        assert_eq!(
            neutral("#![mutants :: skip]\n#[cfg_attr(test, ::mutants::skip)] fn f() {}\n"),
            "#![mutant_ :: skip]\n#[cfg_attr(test, ::mutant_::skip)] fn f() {}\n"
        );
        assert_eq!(
            neutral("let mutants_x = my_mutants; mutants"),
            "let mutants_x = my_mutants; mutant_"
        );
        assert_eq!(neutral("é mutants:"), "é mutant_:");
        assert_eq!(
            neutral("émutants mutantsmutants"),
            "émutants mutantsmutants"
        );
        let mut m = mutants(
            r#"[{"file": "a.rs", "replacement": "mutant_::Kind::default()", "span": {"start": {"line": 1, "column": 1}, "end": {"line": 1, "column": 2}}}]"#,
            &[("a.rs", "x\n", &[1])],
        )
        .unwrap();
        assert_eq!(m.remove(0).replacement, "mutants::Kind::default()");
    }

    #[test]
    fn the_listing_is_ours_of_the_changed_files() {
        assert_eq!(
            list_args(Listing::Mutants, &["src/lib.rs", "src/a b.rs"]).unwrap(),
            [
                "mutants",
                "--list",
                "--json",
                "--no-config",
                "--workspace",
                "--file",
                "src/lib.rs",
                "--file",
                "src/a b.rs"
            ]
        );
        assert_eq!(
            list_args(Listing::Files, &["src/lib.rs"]).unwrap(),
            [
                "mutants",
                "--list-files",
                "--json",
                "--no-config",
                "--workspace",
                "--file",
                "src/lib.rs"
            ]
        );
        assert_eq!(
            list_args(Listing::Mutants, &["src/[id].rs"]).unwrap_err(),
            "cargo-mutants would read `[` in src/[id].rs as a pattern, not a file name"
        );
    }

    #[test]
    fn the_files_mutated_are_those_the_listing_names_once_each() {
        assert_eq!(
            mutated_paths(LISTING).unwrap(),
            ["src/lib.rs", "src/other.rs"]
        );
        assert_eq!(mutated_paths("[]").unwrap(), Vec::<String>::new());
        assert_eq!(
            mutated_paths("{}").unwrap_err(),
            "cargo-mutants' listing is not a list of mutants"
        );
    }

    #[test]
    fn the_files_it_reads_are_its_listings_paths() {
        // cargo-mutants 27.1.0's `--list-files --json` of a crate whose lib.rs has `mod m;`
        // and `include!("inc.rs");`: the included file is not read.
        let listed = "[\n  {\n    \"package\": \"calc\",\n    \"path\": \"src/lib.rs\"\n  },\n  \
            {\n    \"package\": \"calc\",\n    \"path\": \"src/m.rs\"\n  }\n]";
        assert_eq!(files_read(listed).unwrap(), ["src/lib.rs", "src/m.rs"]);
        assert_eq!(files_read("[]").unwrap(), Vec::<String>::new());
        assert_eq!(
            files_read("[{\"package\": \"calc\"}]").unwrap_err(),
            "cargo-mutants' listing of files is not a list of paths"
        );
        assert!(files_read("").is_err());
    }

    proptest! {
        /// Whatever the listing says, reading it and applying its mutants never panics, and
        /// what applies keeps the replacement.
        #[test]
        fn any_listing_reads_without_panic(
            text in "[a-z +é😀\r\n]{0,40}",
            line in 0usize..6, col in 0usize..30, end_line in 0usize..6, end_col in 0usize..30,
            replacement in "\\PC{0,8}",
        ) {
            let listing = serde_json::json!([{"file": "a.rs", "replacement": replacement,
                "span": {"start": {"line": line, "column": col},
                         "end": {"line": end_line, "column": end_col}}}])
                .to_string();
            for m in mutants(&listing, &[("a.rs", &text, &[1, 2, 3, 4, 5])]).unwrap() {
                if let Some(out) = m.apply(&text) {
                    prop_assert!(out.contains(m.replacement.as_str()));
                }
                let _ = m.name(&text);
            }
        }

        /// A span in an ASCII line applies as the string slice it names.
        #[test]
        fn an_ascii_span_is_replaced_exactly(
            line in "[a-z +;]{0,30}", a in 0usize..31, b in 0usize..31, r in "[a-z]{0,4}",
        ) {
            let (a, b) = (a.min(line.len()), b.min(line.len()));
            let (a, b) = (a.min(b), a.max(b));
            let text = format!("x\n{line}\ny\n");
            let m = Mutant { path: "a.rs".into(), genre: "M".into(), replacement: r.clone(),
                start: (2, a + 1), end: (2, b + 1) };
            prop_assert_eq!(
                m.apply(&text),
                Some(format!("x\n{}{}{}\ny\n", &line[..a], r, &line[b..]))
            );
        }

        /// Renaming keeps every line's length in characters.
        #[test]
        fn neutral_keeps_columns(text in "(mutants|[a-z_:# é\n]){0,20}") {
            let out = neutral(&text);
            prop_assert_eq!(
                out.lines().map(|l| l.chars().count()).collect::<Vec<_>>(),
                text.lines().map(|l| l.chars().count()).collect::<Vec<_>>()
            );
        }

        /// Garbage is an error, not a panic.
        #[test]
        fn garbage_is_an_error(s in "\\PC{0,60}") {
            let _ = mutants(&s, &[("a.rs", "x", &[1])]);
            let _ = files_read(&s);
            let _ = mutated_paths(&s);
        }
    }
}
