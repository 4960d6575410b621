//! The words and simple commands of shell text as src/workflow/shell_reach.rs reads them:
//! what each word's value is where it is known, which plain variables it expands, and what
//! ends each simple command.

/// A word of shell text: its value with quotes removed, `None` where the shell would expand
/// it (a `$`, a backquote, a glob, a leading `~`), and the text as written.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Word {
    pub(super) value: Option<String>,
    pub(super) raw: String,
    /// Its literal text and the plain variables (`$D`, `${D}`) it expands, where nothing
    /// else in it is expanded: its value once those are known (src/workflow/shell_reach/vars.rs).
    pub(super) parts: Option<Vec<Part>>,
}

impl Word {
    pub(super) fn known(&self) -> Option<&str> {
        self.value.as_deref()
    }
}

/// A piece of a word: literal text, or a plain variable, inside double quotes or not.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Part {
    Text(String),
    Var { name: String, quoted: bool },
}

/// What ends a simple command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Sep {
    /// The start of the text (before the first command).
    Start,
    /// `;`, `;;` or a newline.
    Seq,
    /// `&`: the command before it runs in the background, a subshell.
    Background,
    And,
    Or,
    /// `|`: each side of a pipe runs in a subshell.
    Pipe,
    /// `(`.
    Open,
    /// `)`.
    Close,
    /// The end of the text.
    Eof,
}

/// A simple command of a shell text: its words (redirections' targets not among them), the
/// file its standard input is read from (`< check.sh`), and what ends it.
#[derive(Clone, Debug)]
pub(super) struct Simple {
    pub(super) words: Vec<Word>,
    pub(super) stdin: Option<Word>,
    pub(super) end: Sep,
}

/// A shell variable's name: a letter or `_`, then letters, digits and `_`.
pub(super) fn is_name(text: &str) -> bool {
    text.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && text.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}
