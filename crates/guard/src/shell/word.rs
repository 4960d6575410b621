//! The words and commands a line is read into: each word as its parts, each simple command
//! with its assignments, words, redirections, stdin and how it joins the one before.

/// One part of a word, as the shell would expand it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Part {
    /// Literal text; `quoted` when it was quoted, so glob characters in it are literal.
    Text { text: String, quoted: bool },
    /// `$NAME` or `${NAME}`.
    Param { name: String, quoted: bool },
    /// `~` or `~user` at the start of a word.
    Tilde(String),
    /// `$(…)` or backticks: the commands inside are read apart; `inner` is their text.
    Subst { inner: String, quoted: bool },
    /// Anything else whose value is not in the text: `${x:-y}`, `$((…))`, `$@`, `$1`,
    /// brace expansion, process substitution, an array.
    Opaque { text: String },
}

/// A word: its parts and its text as written.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Word {
    pub parts: Vec<Part>,
    pub raw: String,
}

impl Word {
    /// A word of one literal part (the guard's own words: a gate's command, a `find -exec`).
    pub fn literal_word(text: &str) -> Word {
        Word {
            parts: vec![Part::Text {
                text: text.to_string(),
                quoted: true,
            }],
            raw: text.to_string(),
        }
    }

    /// The raw text as written.
    pub fn raw(&self) -> &str {
        &self.raw
    }

    /// The value after quote removal, when nothing in the word is expanded: no parameter,
    /// substitution, unquoted glob character or brace expansion.
    pub fn literal(&self) -> Option<String> {
        let mut out = String::new();
        // An unquoted `[` opens a bracket that an unquoted `]` in a later part closes too:
        // quoted text may stand between (`.gi[t"x"]` matches `.git`).
        let mut open = false;
        for part in &self.parts {
            match part {
                Part::Text { text, quoted } => {
                    if !quoted {
                        for c in text.chars() {
                            match c {
                                '*' | '?' => return None,
                                '[' => open = true,
                                ']' if open => return None,
                                _ => {}
                            }
                        }
                    }
                    out.push_str(text);
                }
                _ => return None,
            }
        }
        Some(out)
    }

    /// The text with quotes removed and expansions kept as written (`$HOME` stays `$HOME`):
    /// how the guard quotes a word back, and what it looks for names in.
    pub fn text(&self) -> String {
        let mut out = String::new();
        for part in &self.parts {
            match part {
                Part::Text { text, .. } => out.push_str(text),
                Part::Param { name, .. } => {
                    out.push('$');
                    out.push_str(name);
                }
                Part::Tilde(user) => {
                    out.push('~');
                    out.push_str(user);
                }
                Part::Subst { inner, .. } => {
                    out.push_str("$(");
                    out.push_str(inner);
                    out.push(')');
                }
                Part::Opaque { text } => out.push_str(text),
            }
        }
        out
    }

    /// `NAME=value` / `NAME+=value` (the name unquoted, as the shell takes an assignment):
    /// the name, whether it appends, and the value's parts.
    pub fn assignment(&self) -> Option<(String, bool, Word)> {
        let Some(Part::Text {
            text,
            quoted: false,
        }) = self.parts.first()
        else {
            return None;
        };
        let (name, value) = text.split_once('=')?;
        let (name, append) = match name.strip_suffix('+') {
            Some(n) => (n, true),
            None => (name, false),
        };
        if !is_name(name) {
            return None;
        }
        let mut parts = Vec::with_capacity(self.parts.len());
        if !value.is_empty() {
            parts.push(Part::Text {
                text: value.to_string(),
                quoted: false,
            });
        }
        parts.extend(self.parts[1..].iter().cloned());
        let raw = self
            .raw
            .split_once('=')
            .map(|(_, r)| r.to_string())
            .unwrap_or_default();
        Some((name.to_string(), append, Word { parts, raw }))
    }
}

/// How a command is joined to the one before it at its level.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Joint {
    /// The first command, or after `;`, `&` or a newline: it always runs.
    #[default]
    Seq,
    /// After `&&`: it runs only when the one before succeeded.
    And,
    /// After `||`: it runs only when the one before failed.
    Or,
    /// After `|`: its stdin is the output of the command before.
    Pipe,
}

/// What a command reads on its stdin, when the line says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stdin {
    /// A here-document or here-string; `expands` when `$…` and substitutions in it are
    /// expanded (unquoted delimiter) and the text holds some.
    Text { text: String, expands: bool },
    /// A `|` from this command (its own stdin, when a pipe too, left as `Compound`).
    Pipe(Box<Simple>),
    /// A `|` from a compound command (`done | sh`, `) | bash`): output the line does not show.
    Compound,
}

/// One simple command: `VAR=x program args… >target`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Simple {
    /// Leading `NAME=value` words.
    pub assignments: Vec<Word>,
    pub words: Vec<Word>,
    /// Targets of `>`, `>>`, `>|`, `&>`, `<>`, `>&file` (files the command writes).
    pub writes: Vec<Word>,
    /// Files of `<` redirections (what the command reads on stdin).
    pub reads: Vec<Word>,
    pub stdin: Option<Stdin>,
    pub joint: Joint,
    /// Inside a subshell, a group, a compound command or a substitution: an assignment here
    /// may not last, or may not happen.
    pub nested: bool,
}

impl Simple {
    /// The words' texts (see [`Word::text`]).
    pub fn texts(&self) -> Vec<String> {
        self.words.iter().map(Word::text).collect()
    }
}

/// A shell variable name.
pub fn is_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}
