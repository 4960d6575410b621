//! What a shell word is worth to the guard: known (a literal, or built only of what the line
//! itself makes known), a glob, or unknowable; and the shell variables the line assigns.

use std::collections::HashMap;
use std::path::Path;

use super::policy::{Reason, Rule, Unknown};
use crate::shell::{Part, Word};

/// A word as the guard knows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Arg {
    /// The value when known; otherwise the text, expansions kept as written.
    pub text: String,
    /// A wildmatch pattern of the values it may take, when not exactly known: glob
    /// characters as written, each unknowable part as `*`.
    pub pattern: Option<String>,
    /// The first part whose value cannot be known (`$x`, `$(…)`), if any.
    pub unknown: Option<String>,
}

impl Arg {
    pub fn known(text: impl Into<String>) -> Arg {
        Arg {
            text: text.into(),
            pattern: None,
            unknown: None,
        }
    }

    /// Unknowable, with the word that makes it so.
    pub fn unknowable(text: impl Into<String>) -> Arg {
        let text = text.into();
        Arg {
            pattern: Some("*".into()),
            unknown: Some(text.clone()),
            text,
        }
    }

    /// The value, when exactly known.
    pub fn value(&self) -> Option<&str> {
        self.pattern.is_none().then_some(self.text.as_str())
    }

    pub fn is_known(&self) -> bool {
        self.pattern.is_none()
    }

    /// What it may match, as a wildmatch pattern (its value escaped, when known).
    pub fn as_pattern(&self) -> String {
        match &self.pattern {
            Some(p) => p.clone(),
            None => escape(&self.text),
        }
    }
}

/// The refusal of a word the guard cannot know, naming the part it cannot.
pub fn unknowable(arg: &Arg, what: Unknown) -> Reason {
    Reason::new(
        Rule::Unknowable(what),
        arg.unknown.clone().unwrap_or_else(|| arg.text.clone()),
    )
}

/// Glob characters escaped, so the text matches only itself.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// More alternatives than this and a word is taken as unknowable.
const MAX_ALTERNATIVES: usize = 32;
/// A word longer than this once expanded is taken as unknowable: expansion stays small.
const MAX_VALUE: usize = 64 * 1024;

/// The shell variables the line has assigned so far: each may hold one of several values.
#[derive(Clone, Debug, Default)]
pub struct Vars {
    values: HashMap<String, Vec<Arg>>,
}

/// What the guard knows of where and as whom the command runs, for `~`, `$PWD` and the
/// substitutions whose output it can tell.
pub struct Known<'a> {
    pub cwd: Option<&'a Path>,
    pub root: &'a Path,
    pub head_branch: Option<&'a str>,
    pub home: Option<&'a str>,
}

impl Vars {
    /// `name=value`: replaces what it held, or, where the assignment may not happen or may
    /// not last (`a && x=1`, a subshell), adds a value it may hold.
    pub fn assign(&mut self, name: &str, values: Vec<Arg>, certain: bool) {
        let entry = self.values.entry(name.to_string());
        match entry {
            std::collections::hash_map::Entry::Occupied(mut held) if !certain => {
                let list = held.get_mut();
                list.extend(values);
                if list.len() > MAX_ALTERNATIVES {
                    *list = vec![Arg::unknowable(format!("${name}"))];
                }
            }
            std::collections::hash_map::Entry::Occupied(mut held) => *held.get_mut() = values,
            std::collections::hash_map::Entry::Vacant(slot) => {
                let mut values = values;
                if !certain {
                    // It may still hold what the environment gave it.
                    values.push(Arg::unknowable(format!("${name}")));
                }
                slot.insert(values);
            }
        }
    }

    /// Set by something the guard cannot see (`read x`, `printf -v x`).
    pub fn forget(&mut self, name: &str) {
        self.values
            .insert(name.to_string(), vec![Arg::unknowable(format!("${name}"))]);
    }

    /// The values `word` may take: one, several (a loop's variable, an unquoted variable
    /// that splits into words), or an unknowable one.
    pub fn resolve(&self, word: &Word, known: &Known) -> Vec<Arg> {
        let mut alternatives: Vec<Partial> = vec![Partial::default()];
        let mut split = false;
        for part in &word.parts {
            match part {
                Part::Text { text, quoted } => {
                    for alt in &mut alternatives {
                        alt.push_text(text, !quoted);
                    }
                }
                Part::Param { name, quoted } => {
                    let values: Vec<Arg> = match self.values.get(name) {
                        Some(values) => values.clone(),
                        None => match special(name, known) {
                            Some(v) => vec![Arg::known(v)],
                            None => vec![Arg::unknowable(format!("${name}"))],
                        },
                    };
                    // An unquoted expansion of a value with blanks splits into words.
                    if !quoted
                        && values
                            .iter()
                            .any(|v| v.text.contains([' ', '\t', '\n']) && v.is_known())
                        && word.parts.len() == 1
                    {
                        split = true;
                    }
                    alternatives = product(alternatives, &values, *quoted);
                }
                Part::Tilde(user) => {
                    let home = if user.is_empty() { known.home } else { None };
                    for alt in &mut alternatives {
                        match home {
                            Some(h) => alt.push_text(h, false),
                            None => alt.push_unknown(&format!("~{user}")),
                        }
                    }
                }
                Part::Subst { inner, .. } => {
                    let value = substitution(inner, known);
                    let temporary = value.is_none().then(|| temporary(inner)).flatten();
                    for alt in &mut alternatives {
                        match (&value, &temporary) {
                            (Some(v), _) => alt.push_text(v, false),
                            // A new name in the temporary directory: a glob of its template.
                            (None, Some(pattern)) => alt.push_arg(
                                &Arg {
                                    text: format!("$({inner})"),
                                    pattern: Some(pattern.clone()),
                                    unknown: None,
                                },
                                false,
                            ),
                            (None, None) => alt.push_unknown(&format!("$({inner})")),
                        }
                    }
                }
                Part::Opaque { text } => {
                    for alt in &mut alternatives {
                        alt.push_unknown(text);
                    }
                }
            }
            if alternatives.len() > MAX_ALTERNATIVES
                || alternatives.iter().any(|a| a.text.len() > MAX_VALUE)
            {
                let shown: String = word.raw.chars().take(64).collect();
                return vec![Arg::unknowable(shown)];
            }
        }
        let mut out: Vec<Arg> = alternatives.into_iter().map(Partial::finish).collect();
        if split {
            out = out
                .into_iter()
                .flat_map(|arg| {
                    if arg.is_known() {
                        arg.text
                            .split([' ', '\t', '\n'])
                            .filter(|w| !w.is_empty())
                            .map(Arg::known)
                            .collect::<Vec<_>>()
                    } else {
                        vec![arg]
                    }
                })
                .collect();
        }
        out
    }
}

/// Variables whose value the guard knows without the line setting them.
fn special(name: &str, known: &Known) -> Option<String> {
    match name {
        "HOME" => known.home.map(str::to_string),
        "PWD" => known.cwd.map(|c| c.to_string_lossy().to_string()),
        _ => None,
    }
}

/// The output of the few substitutions the guard can tell: where it is, the repository's
/// top, the branch.
fn substitution(inner: &str, known: &Known) -> Option<String> {
    let words: Vec<&str> = inner.split_whitespace().collect();
    match words.as_slice() {
        ["pwd"] | ["pwd", "-P" | "-L"] => known.cwd.map(|c| c.to_string_lossy().to_string()),
        ["git", "rev-parse", "--show-toplevel"] => Some(known.root.to_string_lossy().to_string()),
        ["git", "branch", "--show-current"] | ["git", "rev-parse", "--abbrev-ref", "HEAD"] => {
            known.head_branch.map(str::to_string)
        }
        _ => None,
    }
}

/// What `$(mktemp …)` prints, as a glob: a new name from its template (`tmp.XXXXXXXXXX` by
/// default) in the temporary directory, or where the template says.
fn temporary(inner: &str) -> Option<String> {
    let words: Vec<&str> = inner.split_whitespace().collect();
    let (program, args) = words.split_first()?;
    if *program != "mktemp" {
        return None;
    }
    let mut directory = std::env::var("TMPDIR").ok().filter(|d| d.starts_with('/'));
    let mut template = None;
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match *arg {
            "-p" | "--tmpdir" => directory = Some(args.next()?.to_string()),
            "-d" | "-u" | "-q" | "-t" | "--directory" | "--dry-run" | "--quiet" => {}
            a if a.starts_with("--tmpdir=") => directory = Some(a["--tmpdir=".len()..].to_string()),
            a if a.starts_with("--suffix=") => {}
            a if a.starts_with('-') => return None,
            a => template = Some(a.to_string()),
        }
    }
    let template = template.unwrap_or_else(|| "tmp.XXXXXXXXXX".into());
    if template.contains(['*', '?', '[', '$', '`']) || template.contains("..") {
        return None;
    }
    let stem = template.trim_end_matches('X');
    let full = if template.starts_with('/') {
        stem.to_string()
    } else {
        format!(
            "{}/{stem}",
            directory.as_deref().unwrap_or("/tmp").trim_end_matches('/')
        )
    };
    full.starts_with('/').then(|| format!("{}*", escape(&full)))
}

/// A word being put together.
#[derive(Clone, Debug, Default)]
struct Partial {
    text: String,
    pattern: String,
    glob: bool,
    unknown: Option<String>,
    /// Where in `pattern` an unquoted `[` waits (written escaped) for an unquoted `]`: quoted
    /// text may stand between them (`.gi[t"x"]` is a bracket, and matches `.git`).
    open_bracket: Option<usize>,
}

impl Partial {
    fn push_text(&mut self, text: &str, glob_active: bool) {
        self.text.push_str(text);
        if !glob_active {
            self.pattern.push_str(&escape(text));
            return;
        }
        for c in text.chars() {
            match c {
                '*' | '?' => {
                    self.glob = true;
                    self.pattern.push(c);
                }
                '[' if self.open_bracket.is_none() => {
                    self.open_bracket = Some(self.pattern.len());
                    self.pattern.push_str("\\[");
                }
                ']' if self.open_bracket.is_some() => {
                    if let Some(at) = self.open_bracket.take() {
                        // The `[` is a bracket after all: unescaped.
                        self.pattern.replace_range(at..at + 2, "[");
                    }
                    self.glob = true;
                    self.pattern.push(']');
                }
                c => self.pattern.push_str(&escape(&c.to_string())),
            }
        }
    }

    fn push_unknown(&mut self, text: &str) {
        self.text.push_str(text);
        if !self.pattern.ends_with('*') || self.pattern.ends_with("\\*") {
            self.pattern.push('*');
        }
        if self.unknown.is_none() {
            self.unknown = Some(text.to_string());
        }
    }

    fn push_arg(&mut self, arg: &Arg, quoted: bool) {
        match (&arg.unknown, &arg.pattern) {
            (Some(u), _) => self.push_unknown(u),
            (None, Some(p)) if !quoted => {
                self.text.push_str(&arg.text);
                self.pattern.push_str(p);
                self.glob = true;
            }
            _ => self.push_text(&arg.text, !quoted),
        }
    }

    fn finish(self) -> Arg {
        if self.unknown.is_some() || self.glob {
            Arg {
                text: self.text,
                pattern: Some(self.pattern),
                unknown: self.unknown,
            }
        } else {
            Arg::known(self.text)
        }
    }
}

fn product(alternatives: Vec<Partial>, values: &[Arg], quoted: bool) -> Vec<Partial> {
    let mut out = Vec::with_capacity(alternatives.len() * values.len().max(1));
    for alt in alternatives {
        for value in values {
            let mut next = alt.clone();
            next.push_arg(value, quoted);
            out.push(next);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shell::parse;
    use pretty_assertions::assert_eq;

    fn resolve(line: &str, vars: &Vars) -> Vec<Vec<Arg>> {
        let known = Known {
            cwd: Some(Path::new("/r/src")),
            root: Path::new("/r"),
            head_branch: Some("feat/x"),
            home: Some("/home/u"),
        };
        parse(line)
            .unwrap()
            .pop()
            .unwrap()
            .words
            .iter()
            .map(|w| vars.resolve(w, &known))
            .collect()
    }

    #[test]
    fn words_are_known_globs_or_unknowable() {
        let vars = Vars::default();
        let args = resolve(
            "rm a '*.x' *.o .g[i]t $x \"$(pwd)/f\" ~/.gitconfig $(git branch --show-current) {a,b}",
            &vars,
        );
        assert_eq!(args[1], vec![Arg::known("a")]);
        assert_eq!(args[2], vec![Arg::known("*.x")]);
        assert_eq!(args[3][0].pattern.as_deref(), Some("*.o"));
        assert_eq!(args[3][0].unknown, None);
        assert_eq!(args[4][0].pattern.as_deref(), Some(".g[i]t"));
        assert_eq!(args[5], vec![Arg::unknowable("$x")]);
        assert_eq!(args[6], vec![Arg::known("/r/src/f")]);
        assert_eq!(args[7], vec![Arg::known("/home/u/.gitconfig")]);
        assert_eq!(args[8], vec![Arg::known("feat/x")]);
        assert_eq!(args[9][0].unknown.as_deref(), Some("{a,b}"));
    }

    #[test]
    fn variables_the_line_sets_are_known() {
        let mut vars = Vars::default();
        vars.assign("d", vec![Arg::known(".git")], true);
        vars.assign("f", vec![Arg::known("a"), Arg::known("b c")], true);
        let args = resolve("x $d/hooks/x \"$f\" ${d}*", &vars);
        assert_eq!(args[1], vec![Arg::known(".git/hooks/x")]);
        assert_eq!(args[2], vec![Arg::known("a"), Arg::known("b c")]);
        assert_eq!(args[3][0].pattern.as_deref(), Some(".git*"));
        vars.assign("d", vec![Arg::known("build")], false);
        let args = resolve("x $d", &vars);
        assert_eq!(args[1], vec![Arg::known(".git"), Arg::known("build")]);
        vars.forget("d");
        assert_eq!(resolve("x $d", &vars)[1], vec![Arg::unknowable("$d")]);
        let mut vars = Vars::default();
        vars.assign("s", vec![Arg::known("a b")], true);
        assert_eq!(
            resolve("x $s", &vars)[1],
            vec![Arg::known("a"), Arg::known("b")]
        );
    }
}
