//! Differential testing of the guard's shell reader (`crates/guard/src/shell/`)
//! against `brush-parser`, with `bash -n` as the judge where the two disagree on accept/reject.
//!
//! Both readers are brought to one shape, [`Shape`]: per simple command, per word (its
//! assignments first, then its words), `Some(value)` for a literal word (its value after quote
//! removal) and `None` for a word with an expansion. The comparison is a multiset (both sides
//! sorted), so the order of commands (a `$(…)`'s commands before or after their command) does
//! not matter.
//!
//! # What a simple command is, in this shape
//!
//! - Reserved words are not words. A compound command contributes the simple commands of its
//!   parts (conditions, bodies, `$(…)`s in its words), except two headers:
//!   - `for NAME in W…` is the simple command `["for", NAME, "in", W…]` (`for NAME` without
//!     `in` is `["for", NAME]`);
//!   - `case W in` is `["case", W, "in"]`; its patterns are not commands (nor words).
//! - `do`, `then`, `else`, `elif`, `if`, `while`, `until`, `{`, `}`, `fi`, `done`, `esac`, `!`,
//!   `time` at the start of a command are stripped (today's reader keeps them as words: its
//!   adapter strips them); a command left with no word is dropped.
//! - A function definition `f() { …; }` is its body's commands; its name is not a command.
//! - Redirection targets, here-strings and here-document bodies are not words, but the
//!   commands of their `$(…)`/backticks are commands (a here-document's only when its
//!   delimiter is unquoted).
//! - A process substitution `<(…)` is one non-literal word plus the commands inside.
//! - A word is literal when it has no parameter, command or arithmetic substitution, no tilde
//!   expansion, no unquoted glob character (`*`, `?`, a `[` with an unquoted `]` after it)
//!   and no brace expansion.

use brush_parser::ast;
use brush_parser::word::WordPiece;
use brush_parser::{Parser, ParserOptions};
use git_orchestrate_guard::shell;
use std::process::{Command, Stdio};

/// Per simple command, per word: `Some(value)` when literal, `None` when it expands.
pub type Shape = Vec<Vec<Option<String>>>;

// ---------------------------------------------------------------------------------------------
// Our reader
// ---------------------------------------------------------------------------------------------

/// Our reader (`git_orchestrate_guard::shell`), in the common shape: per simple command, its
/// assignments and words, each its value when literal.
pub fn ours(line: &str) -> Result<Shape, ()> {
    let commands = shell::parse(line).map_err(drop)?;
    Ok(commands
        .iter()
        .map(|s| {
            s.assignments
                .iter()
                .chain(&s.words)
                .map(shell::Word::literal)
                .collect::<Vec<_>>()
        })
        .filter(|w| !w.is_empty())
        .collect())
}

// ---------------------------------------------------------------------------------------------
// brush-parser
// ---------------------------------------------------------------------------------------------

/// Nesting deeper than this (`$($($(…)))`) is refused, as our reader refuses it.
const MAX_DEPTH: usize = 16;

fn options() -> ParserOptions {
    // bash mode, extglob on, tilde expansion at the start of a word: what `bash -O extglob`
    // reads, and the options brush's own fuzz target compares with.
    ParserOptions::default()
}

/// brush-parser's reading of `line`, in the common shape. `Err` when brush refuses the line
/// (or a word or substitution inside it).
///
/// brush-parser 0.4.0 panics on some inputs (an `unwrap` in its tokenizer's
/// `consume_nested_construct`): a panic is taken as a refusal, quietly.
pub fn brush(line: &str) -> Result<Shape, ()> {
    quiet_panics();
    IN_BRUSH.with(|b| b.set(true));
    let result = std::panic::catch_unwind(|| {
        let mut out = Vec::new();
        brush_program(line, &mut out, 0).map(|()| out)
    });
    IN_BRUSH.with(|b| b.set(false));
    result.unwrap_or(Err(()))
}

/// Whether brush panicked on `line` (for the report).
#[allow(dead_code)]
pub fn brush_panics(line: &str) -> bool {
    quiet_panics();
    IN_BRUSH.with(|b| b.set(true));
    let result = std::panic::catch_unwind(|| brush_program(line, &mut Vec::new(), 0));
    IN_BRUSH.with(|b| b.set(false));
    result.is_err()
}

thread_local! {
    static IN_BRUSH: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// A panic hook that says nothing of panics inside brush, and passes the others on.
fn quiet_panics() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !IN_BRUSH.with(|b| b.get()) {
                previous(info);
            }
        }));
    });
}

fn brush_program(text: &str, out: &mut Shape, depth: usize) -> Result<(), ()> {
    if depth > MAX_DEPTH {
        return Err(());
    }
    let options = options();
    let program = Parser::new(text.as_bytes(), &options)
        .parse_program()
        .map_err(|_| ())?;
    let mut walker = Walker {
        out,
        depth,
        options,
    };
    for list in &program.complete_commands {
        walker.list(list)?;
    }
    Ok(())
}

struct Walker<'a> {
    out: &'a mut Shape,
    depth: usize,
    options: ParserOptions,
}

impl Walker<'_> {
    fn push(&mut self, words: Vec<Option<String>>) {
        if !words.is_empty() {
            self.out.push(words);
        }
    }

    fn list(&mut self, list: &ast::CompoundList) -> Result<(), ()> {
        for ast::CompoundListItem(and_or, _) in &list.0 {
            self.pipeline(&and_or.first)?;
            for next in &and_or.additional {
                match next {
                    ast::AndOr::And(p) | ast::AndOr::Or(p) => self.pipeline(p)?,
                }
            }
        }
        Ok(())
    }

    fn pipeline(&mut self, pipeline: &ast::Pipeline) -> Result<(), ()> {
        for command in &pipeline.seq {
            self.command(command)?;
        }
        Ok(())
    }

    fn command(&mut self, command: &ast::Command) -> Result<(), ()> {
        match command {
            ast::Command::Simple(simple) => self.simple(simple),
            ast::Command::Compound(compound, redirects) => {
                self.compound(compound)?;
                self.redirects(redirects.as_ref())
            }
            ast::Command::Function(function) => {
                self.compound(&function.body.0)?;
                self.redirects(function.body.1.as_ref())
            }
            ast::Command::ExtendedTest(test, redirects) => {
                self.extended_test(&test.expr)?;
                self.redirects(redirects.as_ref())
            }
        }
    }

    fn extended_test(&mut self, expr: &ast::ExtendedTestExpr) -> Result<(), ()> {
        use ast::ExtendedTestExpr as E;
        match expr {
            E::And(a, b) | E::Or(a, b) => {
                self.extended_test(a)?;
                self.extended_test(b)
            }
            E::Not(a) | E::Parenthesized(a) => self.extended_test(a),
            E::UnaryTest(_, w) => self.word(w).map(drop),
            E::BinaryTest(_, a, b) => {
                self.word(a)?;
                self.word(b).map(drop)
            }
        }
    }

    fn compound(&mut self, compound: &ast::CompoundCommand) -> Result<(), ()> {
        use ast::CompoundCommand as C;
        match compound {
            C::Arithmetic(_) => Ok(()),
            C::ArithmeticForClause(f) => self.list(&f.body.list),
            C::BraceGroup(g) => self.list(&g.list),
            C::Subshell(s) => self.list(&s.list),
            C::ForClause(f) => {
                let mut header = vec![Some("for".to_string()), Some(f.variable_name.clone())];
                if let Some(values) = &f.values {
                    header.push(Some("in".to_string()));
                    for value in values {
                        header.push(self.word(value)?);
                    }
                }
                self.push(header);
                self.list(&f.body.list)
            }
            C::CaseClause(c) => {
                let subject = self.word(&c.value)?;
                self.push(vec![Some("case".into()), subject, Some("in".into())]);
                for item in &c.cases {
                    for pattern in &item.patterns {
                        self.word(pattern)?;
                    }
                    if let Some(body) = &item.cmd {
                        self.list(body)?;
                    }
                }
                Ok(())
            }
            C::IfClause(i) => {
                self.list(&i.condition)?;
                self.list(&i.then)?;
                for clause in i.elses.iter().flatten() {
                    if let Some(condition) = &clause.condition {
                        self.list(condition)?;
                    }
                    self.list(&clause.body)?;
                }
                Ok(())
            }
            C::WhileClause(w) | C::UntilClause(w) => {
                self.list(&w.0)?;
                self.list(&w.1.list)
            }
            C::Coprocess(c) => self.command(&c.body),
        }
    }

    fn simple(&mut self, simple: &ast::SimpleCommand) -> Result<(), ()> {
        let mut words = Vec::new();
        for item in simple.prefix.iter().flat_map(|p| &p.0) {
            self.item(item, &mut words, true)?;
        }
        if let Some(name) = &simple.word_or_name {
            words.push(self.word(name)?);
        }
        for item in simple.suffix.iter().flat_map(|s| &s.0) {
            self.item(item, &mut words, false)?;
        }
        self.push(words);
        Ok(())
    }

    fn item(
        &mut self,
        item: &ast::CommandPrefixOrSuffixItem,
        words: &mut Vec<Option<String>>,
        prefix: bool,
    ) -> Result<(), ()> {
        use ast::CommandPrefixOrSuffixItem as I;
        match item {
            I::IoRedirect(r) => self.redirect(r),
            I::Word(w) => {
                words.push(self.word(w)?);
                Ok(())
            }
            // A prefix assignment, or an argument of `export`/`declare`/… that brush reads as
            // one: its value is expanded like an assignment's (tilde after `=`).
            // A prefix assignment: its value is expanded as an assignment's (a tilde after the
            // `=`). In the suffix (`export A=b`, which brush also reads as an assignment) it
            // is an argument like any other.
            I::AssignmentWord(assignment, raw) => {
                words.push(if prefix {
                    self.assignment(assignment)?
                } else {
                    self.word(raw)?
                });
                Ok(())
            }
            I::ProcessSubstitution(_, subshell) => {
                words.push(None);
                self.list(&subshell.list)
            }
        }
    }

    fn assignment(&mut self, assignment: &ast::Assignment) -> Result<Option<String>, ()> {
        let name = match &assignment.name {
            ast::AssignmentName::VariableName(n) => Some(n.clone()),
            ast::AssignmentName::ArrayElementName(..) => None,
        };
        let value = match &assignment.value {
            ast::AssignmentValue::Scalar(w) => self.word(w)?,
            ast::AssignmentValue::Array(elements) => {
                for (key, value) in elements {
                    if let Some(key) = key {
                        self.word(key)?;
                    }
                    self.word(value)?;
                }
                None
            }
        };
        let op = if assignment.append { "+=" } else { "=" };
        Ok(name.zip(value).map(|(n, v)| format!("{n}{op}{v}")))
    }

    fn redirects(&mut self, list: Option<&ast::RedirectList>) -> Result<(), ()> {
        for r in list.iter().flat_map(|l| &l.0) {
            self.redirect(r)?;
        }
        Ok(())
    }

    fn redirect(&mut self, redirect: &ast::IoRedirect) -> Result<(), ()> {
        use ast::IoFileRedirectTarget as T;
        match redirect {
            ast::IoRedirect::File(_, _, target) => match target {
                T::Filename(w) | T::Duplicate(w) => self.word(w).map(drop),
                T::Fd(_) => Ok(()),
                T::ProcessSubstitution(_, s) => self.list(&s.list),
            },
            ast::IoRedirect::HereDocument(_, doc) => {
                if doc.requires_expansion {
                    let pieces = brush_parser::word::parse_heredoc(&doc.doc.value, &self.options)
                        .map_err(drop)?;
                    self.pieces(&pieces, true)?;
                }
                Ok(())
            }
            ast::IoRedirect::HereString(_, w) | ast::IoRedirect::OutputAndError(w, _) => {
                self.word(w).map(drop)
            }
        }
    }

    /// A word's value when literal; the commands of its substitutions go to `out`.
    fn word(&mut self, word: &ast::Word) -> Result<Option<String>, ()> {
        let pieces = brush_parser::word::parse(&word.value, &self.options).map_err(drop)?;
        let value = self.pieces(&pieces, false)?;
        if value.is_some() && word.value.contains('{') && self.brace_expands(&word.value) {
            return Ok(None);
        }
        Ok(value)
    }

    fn brace_expands(&self, raw: &str) -> bool {
        use brush_parser::word::BraceExpressionOrText as B;
        matches!(
            brush_parser::word::parse_brace_expansions(raw, &self.options),
            Ok(Some(pieces)) if pieces.iter().any(|p| matches!(p, B::Expr(_)))
        )
    }

    /// The value of `pieces` when none expands; walks every substitution either way.
    fn pieces(
        &mut self,
        pieces: &[brush_parser::word::WordPieceWithSource],
        quoted: bool,
    ) -> Result<Option<String>, ()> {
        let mut value = Some(String::new());
        let mut bracket_open = false;
        let add = |value: &mut Option<String>, text: Option<&str>| match (value.as_mut(), text) {
            (Some(v), Some(t)) => v.push_str(t),
            _ => *value = None,
        };
        for piece in pieces {
            match &piece.piece {
                WordPiece::Text(t) => {
                    // An unquoted `[` opens a bracket expression only with an unquoted `]`
                    // after it, quoted text between allowed (`.gi[t"x"]` matches `.git`; `[`
                    // alone is the test command's name, left as written by bash).
                    let mut glob = false;
                    if !quoted {
                        for c in t.chars() {
                            match c {
                                '*' | '?' => glob = true,
                                '[' => bracket_open = true,
                                ']' if bracket_open => glob = true,
                                _ => {}
                            }
                        }
                    }
                    add(&mut value, (!glob).then_some(t.as_str()));
                }
                WordPiece::SingleQuotedText(t) => add(&mut value, Some(t)),
                // bash ends a `$'…'` value at a NUL (`$'\x0'git` is `git`).
                WordPiece::AnsiCQuotedText(t) => {
                    let decoded = ansi_c(t);
                    add(&mut value, decoded.split('\0').next());
                }
                WordPiece::DoubleQuotedSequence(inner) => {
                    let inner = self.pieces(inner, true)?;
                    add(&mut value, inner.as_deref());
                }
                WordPiece::GettextDoubleQuotedSequence(inner) => {
                    self.pieces(inner, true)?;
                    add(&mut value, None);
                }
                WordPiece::EscapeSequence(e) => {
                    add(&mut value, Some(e.strip_prefix('\\').unwrap_or(e)));
                }
                WordPiece::CommandSubstitution(inner)
                | WordPiece::BackquotedCommandSubstitution(inner) => {
                    brush_program(inner, self.out, self.depth + 1)?;
                    add(&mut value, None);
                }
                WordPiece::TildeExpansion(_)
                | WordPiece::ParameterExpansion(_)
                | WordPiece::ArithmeticExpression(_) => add(&mut value, None),
            }
        }
        Ok(value)
    }
}

/// The value of the text of a `$'…'` as bash 5.2 decodes it (`ansicstr`): `\n`…, `\NNN`
/// (1-3 octal digits), `\xHH` (1-2), `\uHHHH` (1-4), `\UHHHHHHHH` (1-8), `\cX`; a backslash
/// before anything else, or `\x`/`\u`/`\U` with no digit, is kept.
pub fn ansi_c(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        i += 1;
        if c != '\\' || i == chars.len() {
            out.push(c);
            continue;
        }
        let e = chars[i];
        i += 1;
        let simple = match e {
            'a' => Some('\u{7}'),
            'b' => Some('\u{8}'),
            'e' | 'E' => Some('\u{1b}'),
            'f' => Some('\u{c}'),
            'n' => Some('\n'),
            'r' => Some('\r'),
            't' => Some('\t'),
            'v' => Some('\u{b}'),
            '\\' | '\'' | '"' | '?' => Some(e),
            _ => None,
        };
        if let Some(s) = simple {
            out.push(s);
            continue;
        }
        let mut number = |radix: u32, most: usize, first: Option<u32>| {
            let mut value = first.unwrap_or(0);
            let mut taken = usize::from(first.is_some());
            while taken < most
                && let Some(d) = chars.get(i).and_then(|c| c.to_digit(radix))
            {
                value = value * radix + d;
                i += 1;
                taken += 1;
            }
            (taken > 0).then_some(value)
        };
        match e {
            '0'..='7' => {
                let v = number(8, 3, e.to_digit(8)).unwrap_or(0) & 0xff;
                out.push(char::from_u32(v).unwrap_or('\u{fffd}'));
            }
            'x' | 'u' | 'U' => {
                let most = match e {
                    'x' => 2,
                    'u' => 4,
                    _ => 8,
                };
                match number(16, most, None) {
                    Some(v) => out.push(char::from_u32(v).unwrap_or('\u{fffd}')),
                    None => {
                        out.push('\\');
                        out.push(e);
                    }
                }
            }
            'c' if i < chars.len() => {
                let x = chars[i];
                i += 1;
                out.push(char::from_u32(u32::from(x.to_ascii_uppercase()) & 0x1f).unwrap_or(x));
            }
            _ => {
                out.push('\\');
                out.push(e);
            }
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// bash
// ---------------------------------------------------------------------------------------------

/// What `bash -n` says of a line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BashN {
    Accepts,
    /// An unclosed quote or substitution (`'`, `"`, `$'`, `$(`, backtick, `${`): "unexpected
    /// EOF while looking for matching …". An unclosed compound command or a trailing `|`/`&&`
    /// is "syntax error: unexpected end of file", a grammar error.
    RejectsEof(String),
    /// Any other syntax error ("syntax error near unexpected token …").
    RejectsSyntax(String),
    /// No answer in time, or bash could not be run.
    Unknown,
}

/// `bash --norc --noprofile -O extglob -n -c LINE` (brush's fuzz target's oracle), 5 s at most.
pub fn bash_n(line: &str) -> BashN {
    let output = Command::new("timeout")
        .args([
            "5",
            "bash",
            "--norc",
            "--noprofile",
            "-O",
            "extglob",
            "-n",
            "-c",
        ])
        .arg(line)
        .stdin(Stdio::null())
        .output();
    let Ok(output) = output else {
        return BashN::Unknown;
    };
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    match output.status.code() {
        Some(0) => BashN::Accepts,
        Some(124) | None => BashN::Unknown,
        Some(_) if stderr.contains("unexpected EOF while looking for matching") => {
            BashN::RejectsEof(stderr)
        }
        Some(_) => BashN::RejectsSyntax(stderr),
    }
}

/// The simple commands bash actually runs for `line`, with their words after expansion,
/// each as bash passes them to the program: `line` runs in an empty temporary directory with
/// `PATH=/nonexistent` and an empty environment, so every program is "not found" and
/// `command_not_found_handle` prints its words (to fd 3, so that `$(…)` captures none of it;
/// it prints `S` to stdout so that an unquoted `$(…)` stays one word). `x`, `y` and `HOME`
/// are set to one word each. Builtins still run; the generator names none. Bounded: 50
/// programs, `ulimit -t 1`, one second, then its whole process group is killed. Only
/// commands that run are seen (an `if` branch not taken is not, nor the right of `&&`, as
/// every program fails), so it can show a command that a reading misses, never one too many.
pub fn bash_trace(line: &str) -> Option<Vec<Vec<String>>> {
    let dir = std::env::temp_dir().join(format!(
        "brush-diff-trace-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).ok()?;
    let trace = dir.join(".trace");
    // One record is one `write` to a file opened for appending: the commands of a pipeline
    // or a process substitution run at once, and records written piecewise interleave.
    let prelude = "n=0; command_not_found_handle() { n=$((n+1)); [ $n -gt 50 ] && exit 1; local r; printf -v r '%s\\037' \"$@\"; printf '%s\\036' \"$r\" >&3; printf S; return 1; }\n\
                   x=X1 y=Y1 HOME=/home/h PATH=/nonexistent\n";
    // `ulimit -t 1`: a loop that runs no program (`until x=1; do :; done`) ends in a second.
    let script = format!("ulimit -t 1\nexec 3>>.trace\n{prelude}eval \"$1\"\nwait\n");
    // Its own process group, killed whole at the end: background jobs and subshells that
    // outlive bash (`a & until …`) must not.
    use std::os::unix::process::CommandExt;
    let mut child = Command::new("/bin/bash")
        .args(["--norc", "--noprofile", "-c"])
        .arg(script)
        .arg("bash")
        .arg(line)
        .current_dir(&dir)
        .env_clear()
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .ok()?;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(1);
    while child.try_wait().ok()?.is_none() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    let _ = Command::new("/bin/kill")
        .args(["-KILL", "--", &format!("-{}", child.id())])
        .stderr(Stdio::null())
        .status();
    let _ = child.wait();
    let text = std::fs::read_to_string(&trace).ok()?;
    let _ = std::fs::remove_dir_all(&dir);
    Some(
        text.split('\u{1e}')
            .filter(|r| !r.is_empty())
            .take(50)
            .map(|r| {
                r.strip_suffix('\u{1f}')
                    .unwrap_or(r)
                    .split('\u{1f}')
                    .map(String::from)
                    .collect()
            })
            .collect(),
    )
}

/// Whether `shape` has a command matching `run` (bash's words): same literal words in order,
/// a `None` standing for zero or more words.
pub fn shape_has(shape: &Shape, run: &[String]) -> bool {
    shape.iter().any(|c| command_matches(c, run))
}

/// Whether `shape` has a command for each command bash ran, one each (a multiset cover,
/// taken greedily). A command with no literal word (an assignment whose value expands)
/// stands for none: it would match anything.
pub fn shape_covers(shape: &Shape, ran: &[Vec<String>]) -> bool {
    let mut used = vec![false; shape.len()];
    ran.iter().all(|run| {
        let found = shape
            .iter()
            .enumerate()
            .find(|(i, c)| !used[*i] && c.iter().any(Option::is_some) && command_matches(c, run));
        found.map(|(i, _)| used[i] = true).is_some()
    })
}

/// Whether one command of a shape can be the command bash ran with `run`'s words.
fn command_matches(c: &[Option<String>], run: &[String]) -> bool {
    fn matches(pattern: &[Option<String>], words: &[String]) -> bool {
        match pattern.split_first() {
            None => words.is_empty(),
            Some((Some(p), rest)) => {
                words.first().is_some_and(|w| w == p) && matches(rest, &words[1..])
            }
            Some((None, rest)) => (0..=words.len()).any(|k| matches(rest, &words[k..])),
        }
    }
    // bash's trace shows the program and its words; a command's leading assignments are not
    // among them.
    let assignment = |w: &Option<String>| {
        w.as_deref().is_some_and(|w| {
            w.split_once('=').is_some_and(|(n, _)| {
                let n = n.strip_suffix('+').unwrap_or(n);
                !n.is_empty()
                    && !n.starts_with(|c: char| c.is_ascii_digit())
                    && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            })
        })
    };
    // An assignment whose value expands is `None` in the shape: any leading run of
    // assignments and expansions may stand before the program.
    let lead = c
        .iter()
        .position(|w| w.is_some() && !assignment(w))
        .unwrap_or(c.len());
    (0..=lead).any(|k| matches(&c[k..], run))
}

// ---------------------------------------------------------------------------------------------
// The rule
// ---------------------------------------------------------------------------------------------

/// How a line fared. `Err` of [`check`] is a disagreement the property test fails on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Agreement {
    /// Both read it, and read the same commands and words.
    Same,
    /// Both refuse it.
    BothRefuse,
    /// Ours refuses, brush reads it, bash refuses it: ours is right.
    OursRefusesInvalid,
    /// Ours reads it, brush refuses it, bash accepts it: brush is not decisive (a gap of brush).
    BrushGap,
    /// Ours reads it, brush and bash refuse it with a grammar error (not a lexical one): ours
    /// reads lexically and is not asked to check the grammar.
    OursLenientGrammar,
    /// Both read it with different words, but bash refuses it: moot.
    BothLenient,
    /// bash gave no answer in time.
    Unknown,
    /// Ours refuses a `case` inside a substitution, on purpose.
    OursRefusesCase,
    /// Both read it, differently, and bash, running it, ran commands that ours' reading has
    /// and brush's lacks: brush is not decisive.
    BrushMissesRun,
}

/// One disagreement.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Mismatch {
    /// Ours refuses a line that bash accepts (a false "unreadable").
    OursRefusesValid { brush: Shape },
    /// Ours reads a line whose quote or substitution bash finds unclosed.
    OursMissesEof { ours: Shape, bash: String },
    /// Both read it, with different commands or words; bash accepts it (or was not asked).
    Words { ours: Shape, brush: Shape },
    /// brush refuses a line bash accepts, and bash, running it (`bash_trace`), runs a command
    /// that is not in ours' reading.
    OursMissesRun {
        ours: Shape,
        missed: Vec<Vec<String>>,
    },
}

pub fn sorted(shape: &Shape) -> Shape {
    let mut s = shape.clone();
    s.sort();
    s
}

/// The rule, for one line:
///
/// | ours | brush | then |
/// |---|---|---|
/// | reads | reads | the multisets must be equal; if not, `bash -n` is asked: if it refuses the line, the difference is moot |
/// | refuses | refuses | agreed |
/// | refuses | reads | `bash -n` refuses → ours is right; accepts → **fail** (ours refuses a valid line) |
/// | reads | refuses | `bash -n` accepts → brush is not decisive, so bash runs the line (`bash_trace`: no program is found, builtins aside; the generator names none) and every command it runs must be in ours' reading (a `None` word standing for any words), else **fail** (set `BRUSH_DIFF_NO_TRACE` to skip this); refuses with a *grammar* error → ours is lenient (it reads lexically); refuses with an *unexpected EOF* (unclosed quote, `$(`, backtick, `${`) → **fail**: ours claims words for a line whose end bash never finds |
///
/// `bash -n` is only run when the two disagree, so a run of agreeing lines spawns nothing.
/// A shape with every word holding a `~` or a brace taken as an expansion.
fn settled(shape: &Shape) -> Shape {
    shape
        .iter()
        .map(|c| {
            c.iter()
                .map(|w| w.clone().filter(|v| !v.contains(['~', '{', '}'])))
                .collect()
        })
        .collect()
}

pub fn check(line: &str) -> Result<Agreement, Mismatch> {
    // Ours refuses a `case` inside a substitution on purpose (a pattern's `)` would end its
    // scan): the guard denies the line, the safe side.
    if shell::parse(line).is_err_and(|e| e.message.contains("`case` inside a substitution")) {
        return Ok(Agreement::OursRefusesCase);
    }
    let o = ours(line);
    let b = brush(line);
    match (o, b) {
        (Ok(o), Ok(b)) => {
            if sorted(&o) == sorted(&b) {
                return Ok(Agreement::Same);
            }
            // A `~user` or a brace: brush and ours may tell literal from expansion apart
            // differently (a login that does not exist is left as written; brush calls it an
            // expansion). The guard takes either as unknowable, the safe side: not decisive.
            if sorted(&settled(&o)) == sorted(&settled(&b)) {
                return Ok(Agreement::Same);
            }
            match bash_n(line) {
                BashN::RejectsEof(_) | BashN::RejectsSyntax(_) => Ok(Agreement::BothLenient),
                BashN::Accepts | BashN::Unknown => {
                    // bash itself decides: when what it runs is in ours' reading and not in
                    // brush's (brush lost a command: `"$(a #)\n b)"`), brush is not decisive.
                    if std::env::var_os("BRUSH_DIFF_NO_TRACE").is_none()
                        && let Some(ran) = bash_trace(line)
                        && shape_covers(&o, &ran)
                        && !shape_covers(&b, &ran)
                    {
                        return Ok(Agreement::BrushMissesRun);
                    }
                    Err(Mismatch::Words { ours: o, brush: b })
                }
            }
        }
        (Err(()), Err(())) => Ok(Agreement::BothRefuse),
        (Err(()), Ok(b)) => match bash_n(line) {
            BashN::Accepts => Err(Mismatch::OursRefusesValid { brush: b }),
            BashN::RejectsEof(_) | BashN::RejectsSyntax(_) => Ok(Agreement::OursRefusesInvalid),
            BashN::Unknown => Ok(Agreement::Unknown),
        },
        (Ok(o), Err(())) => match bash_n(line) {
            BashN::Accepts => {
                // brush is not decisive: what bash runs is (see `bash_trace`).
                if std::env::var_os("BRUSH_DIFF_NO_TRACE").is_none()
                    && let Some(ran) = bash_trace(line)
                {
                    let missed: Vec<Vec<String>> =
                        ran.into_iter().filter(|r| !shape_has(&o, r)).collect();
                    if !missed.is_empty() {
                        return Err(Mismatch::OursMissesRun { ours: o, missed });
                    }
                }
                Ok(Agreement::BrushGap)
            }
            BashN::RejectsSyntax(_) => Ok(Agreement::OursLenientGrammar),
            BashN::RejectsEof(bash) => Err(Mismatch::OursMissesEof { ours: o, bash }),
            BashN::Unknown => Ok(Agreement::Unknown),
        },
    }
}
