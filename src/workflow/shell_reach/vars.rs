//! Which variables of one shell text are known where they are used (`D=t; sh "$D/check.sh"`):
//! only those set exactly once in the text, to a value known there, by a command that surely
//! runs before whatever follows it (not in a branch, a loop, a function, a subshell or after
//! `&&`), and changed nowhere else. Anything the text could change them by without saying so
//! (`eval`, a sourced file, arithmetic, `${D:=…}`, a program whose name is an expansion)
//! leaves every variable of the text unknown, as one from the environment or `$(…)` is:
//! what is unknown names no file.

use super::words::{Part, Sep, Simple, Word, is_name};

/// At most this many variables of one text are known, each at most this long: a value can
/// double at each assignment (`D="$D$D"`), and reading is bounded.
const MAX_VARS: usize = 64;
const MAX_VALUE: usize = 1024;

/// The variables of one text, as its commands are read in order.
pub(super) struct Vars {
    /// The names set exactly once, where that surely runs.
    stable: Vec<String>,
    /// Their values, each from its assignment on.
    known: Vec<(String, String)>,
    /// `IFS` is set in the text: an unquoted expansion may split anywhere.
    ifs: bool,
}

/// A compound command the reading is inside.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Frame {
    If,
    Loop,
    Case,
    Brace,
    Paren,
}

/// What one simple command does to variables.
#[derive(Default)]
struct Effects<'w> {
    /// Its leading reserved words (`if`, `then`, `{`, `fi`, `!` …).
    reserved: Vec<&'w str>,
    /// Its assignments that set a shell variable: the words of a command of assignments
    /// only, or `export`'s and `readonly`'s.
    sets: Vec<&'w Word>,
    /// Names it may change otherwise (`read D`, `for D in`, `unset D`, `D=u cmd`, `D+=x`).
    touches: Vec<String>,
    /// It may change any variable (`eval`, `.`, `trap`, a program that is an expansion).
    any: bool,
}

impl Vars {
    /// The variables of text `text`, whose simple commands are `commands`.
    pub(super) fn of(text: &str, commands: &[Simple]) -> Vars {
        let mut frames: Vec<Frame> = Vec::new();
        let mut prev = Sep::Start;
        let mut sites: Vec<(String, usize)> = Vec::new();
        let mut touched: Vec<String> = Vec::new();
        // Arithmetic (`(( D = 1 ))`, `$((D=1))`, `$[D=1]`) and `${D:=t}` set variables inside
        // words, even in here-documents' bodies: anywhere in the text, none is known.
        let mut any = text.contains("((") || text.contains("$[") || braces_assign(text);
        for simple in commands {
            let e = effects(&simple.words);
            any |= e.any;
            for word in &e.reserved {
                match *word {
                    "if" => frames.push(Frame::If),
                    "while" | "until" | "for" | "select" => frames.push(Frame::Loop),
                    "case" => frames.push(Frame::Case),
                    "{" => frames.push(Frame::Brace),
                    "fi" => close(&mut frames, Frame::If),
                    "done" => close(&mut frames, Frame::Loop),
                    "esac" => close(&mut frames, Frame::Case),
                    "}" => close(&mut frames, Frame::Brace),
                    _ => {}
                }
            }
            let surely = frames.is_empty()
                && e.reserved.is_empty()
                && matches!(prev, Sep::Start | Sep::Seq | Sep::Background)
                && matches!(simple.end, Sep::Seq | Sep::And | Sep::Or | Sep::Eof);
            for word in &e.sets {
                let Some(name) = leading_name(&word.raw) else {
                    continue;
                };
                if !surely {
                    touched.push(name.to_string());
                } else if let Some(site) = sites.iter_mut().find(|(n, _)| n == name) {
                    site.1 += 1;
                } else {
                    sites.push((name.to_string(), 1));
                }
            }
            touched.extend(e.touches);
            match simple.end {
                Sep::Open => frames.push(Frame::Paren),
                // Or a `case` pattern's end, inside the `case`.
                Sep::Close if frames.last() == Some(&Frame::Paren) => {
                    frames.pop();
                }
                _ => {}
            }
            // A line that ends after `&&`, `||` or `|` goes on on the next.
            let goes_on = simple.words.is_empty()
                && simple.end == Sep::Seq
                && matches!(prev, Sep::And | Sep::Or | Sep::Pipe);
            if !goes_on {
                prev = simple.end;
            }
        }
        let ifs = touched.iter().any(|n| n == "IFS") || sites.iter().any(|(n, _)| n == "IFS");
        let stable = if any {
            Vec::new()
        } else {
            sites
                .into_iter()
                .filter(|(name, count)| *count == 1 && !touched.contains(name))
                .map(|(name, _)| name)
                .collect()
        };
        Vars {
            stable,
            known: Vec::new(),
            ifs,
        }
    }

    /// `word` with its value, where the variables it expands are known here.
    pub(super) fn expand(&self, word: &Word) -> Word {
        if word.value.is_some() || self.known.is_empty() {
            return word.clone();
        }
        match self.value(word, false) {
            Some(value) => Word {
                value: Some(value),
                ..word.clone()
            },
            None => word.clone(),
        }
    }

    /// Takes in what simple command `simple` set, once it ran.
    pub(super) fn after(&mut self, simple: &Simple) {
        if self.stable.is_empty() {
            return;
        }
        for word in effects(&simple.words).sets {
            let Some(name) = leading_name(&word.raw) else {
                continue;
            };
            if !self.stable.iter().any(|n| n == name) || self.known.len() >= MAX_VARS {
                continue;
            }
            // An assignment's value is neither split nor globbed; a `~` in it may be expanded.
            let value = self
                .value(word, true)
                .and_then(|v| v.split_once('=').map(|(_, v)| v.to_string()))
                .filter(|v| !v.contains('~'));
            if let Some(value) = value {
                self.known.push((name.to_string(), value));
            }
        }
    }

    /// The value of `word` with the variables known here, `None` where one is not known or,
    /// outside an assignment and quotes, would be split, globbed or dropped.
    fn value(&self, word: &Word, assignment: bool) -> Option<String> {
        if let Some(value) = &word.value {
            return Some(value.clone());
        }
        let mut out = String::new();
        for part in word.parts.as_ref()? {
            match part {
                Part::Text(text) => out.push_str(text),
                Part::Var { name, quoted } => {
                    let (_, value) = self.known.iter().find(|(n, _)| n == name)?;
                    let plain = !value.is_empty()
                        && !self.ifs
                        && !value.contains(|c: char| c.is_whitespace() || "*?[".contains(c));
                    if !assignment && !quoted && !plain {
                        return None;
                    }
                    out.push_str(value);
                }
            }
            if out.len() > MAX_VALUE {
                return None;
            }
        }
        Some(out)
    }
}

/// Closes the innermost `frame` open, and what is open inside it.
fn close(frames: &mut Vec<Frame>, frame: Frame) {
    if let Some(at) = frames.iter().rposition(|f| *f == frame) {
        frames.truncate(at);
    }
}

/// Whether a `${…}` in `text` holds a `=` (`${D:=t}`, `${D=t}`), which may set `D`.
fn braces_assign(text: &str) -> bool {
    text.split("${").skip(1).any(|rest| {
        rest.split('}')
            .next()
            .is_some_and(|inside| inside.contains('='))
    })
}

/// The variable name `text` starts with, where it does.
fn leading_name(text: &str) -> Option<&str> {
    let end = text
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(text.len());
    let name = &text[..end];
    is_name(name).then_some(name)
}

/// Whether `raw` assigns a variable, as a word before a command's name: `D=t`, `D+=t`,
/// `D[0]=t`.
fn assigns(raw: &str) -> bool {
    leading_name(raw).is_some_and(|name| {
        let rest = &raw[name.len()..];
        rest.starts_with('=')
            || rest.starts_with("+=")
            || (rest.starts_with('[') && (rest.contains("]=") || rest.contains("]+=")))
    })
}

/// Whether `raw` is a plain assignment, `D=t`.
fn plain_assignment(raw: &str) -> bool {
    leading_name(raw).is_some_and(|name| raw[name.len()..].starts_with('='))
}

/// What simple command `words` does to variables.
fn effects(words: &[Word]) -> Effects<'_> {
    let mut e = Effects::default();
    let mut i = 0;
    while let Some(word) = words.get(i).and_then(Word::known) {
        match word {
            "if" | "then" | "else" | "elif" | "fi" | "while" | "until" | "do" | "done" | "case"
            | "esac" | "{" | "}" | "!" | "for" | "select" => {
                e.reserved.push(word);
                i += 1;
                if matches!(word, "for" | "select") {
                    // What follows is the loop's list, which names no variable.
                    e.touches.extend(words.get(i).map(|w| w.raw.clone()));
                    return e;
                }
                if word == "case" {
                    return e;
                }
            }
            // Its name; its body is read as its own commands.
            "function" => i += 2,
            _ => break,
        }
    }
    let rest = words.get(i..).unwrap_or_default();
    let Some(at) = rest.iter().position(|w| !assigns(&w.raw)) else {
        for word in rest {
            if plain_assignment(&word.raw) {
                e.sets.push(word);
            } else {
                e.touches
                    .extend(leading_name(&word.raw).map(str::to_string));
            }
        }
        return e;
    };
    // `D=u sh check.sh` sets `D` for that command only, but after some builtins for good.
    for word in &rest[..at] {
        e.touches
            .extend(leading_name(&word.raw).map(str::to_string));
    }
    let args = &rest[at + 1..];
    let Some(program) = rest[at].known() else {
        // A path (`"$(dirname "$0")"/run.sh`) runs a program of its own; any other expansion
        // may be `eval` or `.`.
        e.any = !rest[at].raw.contains('/');
        return e;
    };
    match program {
        "eval" | "." | "source" | "trap" | "alias" | "let" | "command" | "builtin" | "time"
        | "enable" => e.any = true,
        "export" | "readonly" => {
            for arg in args {
                if plain_assignment(&arg.raw) {
                    e.sets.push(arg);
                } else if assigns(&arg.raw) {
                    e.touches.extend(leading_name(&arg.raw).map(str::to_string));
                }
            }
        }
        "read" | "getopts" | "mapfile" | "readarray" | "printf" | "unset" | "local" | "declare"
        | "typeset" => {
            for arg in args {
                match arg.known() {
                    Some(a) => e.touches.extend(leading_name(a).map(str::to_string)),
                    None => e.any = true,
                }
            }
            // A name reference (`declare -n R=D`) sets another variable through its own.
            let reference = args
                .iter()
                .any(|a| a.raw.starts_with('-') && a.raw.contains('n'));
            e.any |= matches!(program, "local" | "declare" | "typeset") && reference;
        }
        _ => {}
    }
    e
}
