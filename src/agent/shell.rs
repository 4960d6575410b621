//! A POSIX shell command line read as the guard needs it: every simple command it would run,
//! across `;`, `&&`, `||`, `|`, `&`, newlines, subshells, compound commands, `$(…)`,
//! backticks and here-documents, each word kept as its parts (literal text, parameters,
//! substitutions) so the guard can tell what it knows from what it cannot. It never runs or
//! expands anything. One pass over the input, in linear time.

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
        for part in &self.parts {
            match part {
                Part::Text { text, quoted } => {
                    if !quoted && has_glob(text) {
                        return None;
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

/// Why a command line could not be read: an unclosed quote or substitution (the shell would
/// refuse it too), or more words and commands than the reader follows (`too_much`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unreadable {
    pub message: String,
    pub too_much: bool,
}

impl Unreadable {
    fn syntax(message: impl Into<String>) -> Unreadable {
        Unreadable {
            message: message.into(),
            too_much: false,
        }
    }
}

/// More words and commands than this in one line, substitutions and here-documents
/// included, is refused rather than read: reading stays linear and small.
pub const MAX_UNITS: usize = 300_000;

/// Every simple command in `line`, in the order they run: the commands of a word's
/// substitutions before the command itself.
pub fn parse(line: &str) -> Result<Vec<Simple>, Unreadable> {
    let mut out = Vec::new();
    Lexer::new(line, MAX_UNITS).run(&mut out, 0, false)?;
    Ok(out)
}

/// Nesting deeper than this (`$($($(…)))`) is refused rather than followed.
const MAX_DEPTH: usize = 8;

/// Words that open or continue a compound command where a command starts; the command is
/// what follows them.
const PREFIX_KEYWORDS: &[&str] = &[
    "if", "then", "else", "elif", "do", "while", "until", "!", "{",
];
/// Words that close a compound command: nothing runs.
const CLOSING_KEYWORDS: &[&str] = &["fi", "done", "esac", "}"];

/// Unquoted `*`, `?` or a `[…]` bracket: the shell may replace the word with file names.
fn has_glob(text: &str) -> bool {
    text.contains(['*', '?'])
        || text
            .find('[')
            .is_some_and(|at| text[at + 1..].contains(']'))
}

/// A shell variable name.
pub fn is_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

struct Lexer {
    /// The whole line, shared with the lexers of its substitutions, which read a range of it.
    chars: std::rc::Rc<[char]>,
    pos: usize,
    end: usize,
    /// Words and commands it may still read.
    budget: usize,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Sep {
    /// `;`, `&`, `;;`, `;&`: the next command runs regardless.
    Seq,
    Newline,
    /// `&&`, `||`.
    And,
    Or,
    /// `|`, `|&`.
    Pipe,
    Open,
    Close,
}

enum Token {
    Word(Word),
    Separator(Sep),
    /// A redirection operator; `writes` when it writes a file. `dup` is `>&`, which writes
    /// the file its target names unless that is a descriptor; `herestring` is `<<<`.
    Redirect {
        writes: bool,
        heredoc: bool,
        dup: bool,
        herestring: bool,
    },
    End,
}

/// A command being read, with the commands its substitutions run (they run first).
#[derive(Default)]
struct Pending {
    before: Vec<Simple>,
    simple: Simple,
    /// Set when the command is a `case WORD in` header: its patterns follow.
    case_header: bool,
}

impl Lexer {
    fn new(line: &str, budget: usize) -> Self {
        let chars: std::rc::Rc<[char]> = line.chars().collect();
        Lexer {
            end: chars.len(),
            chars,
            pos: 0,
            budget,
        }
    }

    /// One more word or command read.
    fn spend(&mut self) -> Result<(), Unreadable> {
        match self.budget.checked_sub(1) {
            Some(left) => {
                self.budget = left;
                Ok(())
            }
            None => Err(Unreadable {
                message: format!("more than {MAX_UNITS} words and commands"),
                too_much: true,
            }),
        }
    }

    /// A line inside this one (a substitution), read on this one's budget.
    fn nested(
        &mut self,
        text: &str,
        out: &mut Vec<Simple>,
        depth: usize,
    ) -> Result<(), Unreadable> {
        let mut inner = Lexer::new(text, self.budget);
        let result = inner.run(out, depth + 1, true);
        self.budget = inner.budget;
        result
    }

    fn peek(&self, offset: usize) -> Option<char> {
        let at = self.pos + offset;
        (at < self.end).then(|| self.chars[at])
    }

    fn run(&mut self, out: &mut Vec<Simple>, depth: usize, nested: bool) -> Result<(), Unreadable> {
        if depth > MAX_DEPTH {
            return Err(Unreadable::syntax("commands nested too deeply"));
        }
        let mut finished: Vec<Pending> = Vec::new();
        let mut current = Pending::default();
        // Here-documents whose bodies start after the next newline: (delimiter, expands,
        // index of their command in `finished`, or past its end for `current`).
        let mut heredocs: Vec<(String, bool, usize)> = Vec::new();
        let mut joint = Joint::Seq;
        let mut groups = 0usize;
        // Inside `if`, `while`, `for`, `{ … }`…: what runs there may not run.
        let mut compound = 0usize;
        // Inside `case … in`: a command position holds patterns up to `)` first.
        let mut case_depth = 0usize;
        let mut in_patterns = false;
        // The previous command ended with a compound command's closing word or `)`.
        let mut after_compound = false;
        loop {
            let token = self.token(&mut current.before, depth)?;
            match token {
                Token::Word(word) => {
                    self.spend()?;
                    let at_start = current.simple.words.is_empty();
                    if in_patterns {
                        // `pat)`, `pat|pat)`: read up to the `)`.
                        if word.raw == "esac" {
                            in_patterns = false;
                            case_depth = case_depth.saturating_sub(1);
                            compound = compound.saturating_sub(1);
                            after_compound = true;
                        }
                        continue;
                    }
                    if at_start && current.simple.assignments.is_empty() {
                        if CLOSING_KEYWORDS.contains(&word.raw.as_str()) {
                            after_compound = true;
                            compound = compound.saturating_sub(1);
                            continue;
                        }
                        if PREFIX_KEYWORDS.contains(&word.raw.as_str()) {
                            if matches!(word.raw.as_str(), "if" | "while" | "until" | "{") {
                                compound += 1;
                            }
                            after_compound = false;
                            continue;
                        }
                        if matches!(word.raw.as_str(), "for" | "select" | "case") {
                            compound += 1;
                        }
                        if word.raw == "case" {
                            current.case_header = true;
                        }
                        if word.raw == "((" {
                            self.skip_arithmetic();
                            continue;
                        }
                    }
                    if current.case_header && word.raw == "in" && current.simple.words.len() == 2 {
                        current.simple.words.push(word);
                        case_depth += 1;
                        in_patterns = true;
                        current.simple.joint = joint;
                        current.simple.nested = nested || groups > 0 || compound > 0;
                        let done = std::mem::take(&mut current);
                        finished.push(done);
                        continue;
                    }
                    after_compound = false;
                    if at_start && word.assignment().is_some() {
                        // `arr=(a b)`: an array, read whole.
                        if word.raw.ends_with('=') && self.peek(0) == Some('(') {
                            let array = self.balanced_parens()?;
                            let mut word = word;
                            word.raw.push_str(&array);
                            word.parts.push(Part::Opaque { text: array });
                            current.simple.assignments.push(word);
                            continue;
                        }
                        current.simple.assignments.push(word);
                    } else {
                        current.simple.words.push(word);
                    }
                }
                Token::Redirect {
                    writes,
                    heredoc,
                    dup,
                    herestring,
                } => {
                    let raw_start = self.pos;
                    let target = match self.token(&mut current.before, depth)? {
                        Token::Word(w) => w,
                        _ => return Err(Unreadable::syntax("a redirection without a target")),
                    };
                    if heredoc {
                        // `<<EOF` expands `$…` in the body; `<<'EOF'` and `<<\EOF` do not.
                        let expands = !self.chars[raw_start..self.pos]
                            .iter()
                            .any(|c| matches!(c, '\'' | '"' | '\\'));
                        heredocs.push((target.text(), expands, finished.len()));
                    } else if herestring {
                        let expands = target.literal().is_none();
                        current.simple.stdin = Some(Stdin::Text {
                            text: target.text(),
                            expands,
                        });
                    } else {
                        let descriptor = target.raw == "-"
                            || (!target.raw.is_empty()
                                && target.raw.chars().all(|c| c.is_ascii_digit()));
                        if writes || (dup && !descriptor) {
                            current.simple.writes.push(target);
                        } else if !dup {
                            current.simple.reads.push(target);
                        }
                    }
                }
                Token::Separator(sep) => {
                    if in_patterns {
                        if sep == Sep::Close {
                            in_patterns = false;
                        }
                        continue;
                    }
                    let empty = current.simple.words.is_empty()
                        && current.simple.assignments.is_empty()
                        && current.simple.writes.is_empty()
                        && current.before.is_empty();
                    if !empty || !current.simple.reads.is_empty() {
                        self.spend()?;
                        current.simple.joint = joint;
                        current.simple.nested = nested || groups > 0 || compound > 0;
                        let done = std::mem::take(&mut current);
                        finished.push(done);
                    }
                    match sep {
                        Sep::Open => {
                            groups += 1;
                            joint = Joint::Seq;
                        }
                        Sep::Close => {
                            groups = groups.saturating_sub(1);
                            after_compound = true;
                        }
                        Sep::Pipe => {
                            joint = Joint::Pipe;
                            if after_compound || empty {
                                // Mark the next command's stdin as a compound's output.
                                current.simple.stdin = Some(Stdin::Compound);
                            }
                        }
                        Sep::And => joint = Joint::And,
                        Sep::Or => joint = Joint::Or,
                        Sep::Seq | Sep::Newline => joint = Joint::Seq,
                    }
                    if sep != Sep::Close && sep != Sep::Pipe {
                        after_compound = false;
                    }
                    if case_depth > 0 && matches!(sep, Sep::Seq) && self.after_double_semicolon() {
                        in_patterns = true;
                    }
                    if sep == Sep::Newline {
                        self.read_heredocs(&mut heredocs, &mut finished, &mut current, depth)?;
                    }
                }
                Token::End => {
                    if !current.simple.words.is_empty()
                        || !current.simple.assignments.is_empty()
                        || !current.simple.writes.is_empty()
                        || !current.simple.reads.is_empty()
                        || !current.before.is_empty()
                        || current.simple.stdin.is_some()
                    {
                        current.simple.joint = joint;
                        current.simple.nested = nested || groups > 0 || compound > 0;
                        finished.push(std::mem::take(&mut current));
                    }
                    self.read_heredocs(&mut heredocs, &mut finished, &mut current, depth)?;
                    break;
                }
            }
        }
        // The command before a `|` at this level is what the next one reads.
        let mut previous: Option<Simple> = None;
        for pending in finished {
            for mut before in pending.before {
                before.nested = true;
                out.push(before);
            }
            let mut simple = pending.simple;
            if simple.joint == Joint::Pipe && simple.stdin.is_none() {
                simple.stdin = Some(match previous.take() {
                    Some(mut producer) => {
                        if matches!(producer.stdin, Some(Stdin::Pipe(_))) {
                            producer.stdin = Some(Stdin::Compound);
                        }
                        Stdin::Pipe(Box::new(producer))
                    }
                    None => Stdin::Compound,
                });
            }
            if !simple.words.is_empty()
                || !simple.assignments.is_empty()
                || !simple.writes.is_empty()
                || !simple.reads.is_empty()
                || simple.stdin.is_some()
            {
                previous = Some(Simple {
                    stdin: match &simple.stdin {
                        Some(Stdin::Text { text, expands }) => Some(Stdin::Text {
                            text: text.clone(),
                            expands: *expands,
                        }),
                        Some(_) => Some(Stdin::Compound),
                        None => None,
                    },
                    ..Simple {
                        assignments: Vec::new(),
                        words: simple.words.clone(),
                        writes: Vec::new(),
                        reads: simple.reads.clone(),
                        stdin: None,
                        joint: simple.joint,
                        nested: simple.nested,
                    }
                });
                out.push(simple);
            }
        }
        Ok(())
    }

    /// The `;;` (or `;&`, `;;&`) just read: the next command position holds patterns.
    fn after_double_semicolon(&self) -> bool {
        self.pos >= 2
            && self.chars[self.pos - 2] == ';'
            && matches!(self.chars[self.pos - 1], ';' | '&')
    }

    /// The bodies of the here-documents opened on the line just ended.
    fn read_heredocs(
        &mut self,
        heredocs: &mut Vec<(String, bool, usize)>,
        finished: &mut [Pending],
        current: &mut Pending,
        depth: usize,
    ) -> Result<(), Unreadable> {
        for (delimiter, expands, index) in std::mem::take(heredocs) {
            let body = self.heredoc_body(&delimiter);
            let expands = expands && body.contains(['$', '`']);
            let subs = if expands {
                self.substitutions_in(&body, depth)?
            } else {
                Vec::new()
            };
            let pending = match finished.get_mut(index) {
                Some(p) => p,
                None => &mut *current,
            };
            pending.before.extend(subs);
            pending.simple.stdin = Some(Stdin::Text {
                text: body,
                expands,
            });
        }
        Ok(())
    }

    /// The lines up to one that is exactly `delimiter` (`<<-` tabs stripped).
    fn heredoc_body(&mut self, delimiter: &str) -> String {
        let mut body = String::new();
        loop {
            if self.pos >= self.end {
                return body;
            }
            let start = self.pos;
            while self.pos < self.end && self.chars[self.pos] != '\n' {
                self.pos += 1;
            }
            let line: String = self.chars[start..self.pos].iter().collect();
            if self.pos < self.end {
                self.pos += 1;
            }
            if line.trim_start_matches('\t') == delimiter {
                return body;
            }
            body.push_str(&line);
            body.push('\n');
        }
    }

    /// `(( … ))` at a command's start: arithmetic, nothing runs (its `$(…)` aside, which
    /// the guard does not follow there).
    fn skip_arithmetic(&mut self) {
        let mut level = 2usize;
        while let Some(c) = self.peek(0) {
            self.pos += 1;
            match c {
                '(' => level += 1,
                ')' => {
                    level -= 1;
                    if level == 0 {
                        return;
                    }
                }
                _ => {}
            }
        }
    }

    /// `( … )` at the cursor, returned as text.
    fn balanced_parens(&mut self) -> Result<String, Unreadable> {
        let start = self.pos;
        let mut level = 0usize;
        while let Some(c) = self.peek(0) {
            self.pos += 1;
            match c {
                '(' => level += 1,
                ')' => {
                    level -= 1;
                    if level == 0 {
                        return Ok(self.chars[start..self.pos].iter().collect());
                    }
                }
                '\\' => self.pos += 1,
                q @ ('\'' | '"') => {
                    while self.peek(0).is_some_and(|c| c != q) {
                        self.pos += 1;
                    }
                    self.pos += 1;
                }
                _ => {}
            }
        }
        Err(Unreadable::syntax("an unclosed ( array"))
    }

    fn token(&mut self, nested: &mut Vec<Simple>, depth: usize) -> Result<Token, Unreadable> {
        // Blanks, line continuations and comments between words.
        loop {
            match self.peek(0) {
                Some(' ' | '\t' | '\r') => self.pos += 1,
                Some('\\') if self.peek(1) == Some('\n') => self.pos += 2,
                Some('#') => {
                    while self.peek(0).is_some_and(|c| c != '\n') {
                        self.pos += 1;
                    }
                }
                _ => break,
            }
        }
        let Some(c) = self.peek(0) else {
            return Ok(Token::End);
        };
        match c {
            '\n' => {
                self.pos += 1;
                return Ok(Token::Separator(Sep::Newline));
            }
            ';' | '&' | '|' | '(' | ')' => {
                // `&>` and `&>>` redirect both streams.
                if c == '&' && self.peek(1) == Some('>') {
                    self.pos += 2;
                    if self.peek(0) == Some('>') {
                        self.pos += 1;
                    }
                    return Ok(Token::Redirect {
                        writes: true,
                        heredoc: false,
                        dup: false,
                        herestring: false,
                    });
                }
                if c == '(' && self.peek(1) == Some('(') {
                    // `((`: arithmetic at a command's start, read as a keyword word.
                    self.pos += 2;
                    return Ok(Token::Word(Word {
                        parts: Vec::new(),
                        raw: "((".into(),
                    }));
                }
                self.pos += 1;
                let next = self.peek(0);
                let sep = match (c, next) {
                    ('&', Some('&')) => {
                        self.pos += 1;
                        Sep::And
                    }
                    ('|', Some('|')) => {
                        self.pos += 1;
                        Sep::Or
                    }
                    (';', Some(';' | '&')) => {
                        self.pos += 1;
                        if self.peek(0) == Some('&') {
                            self.pos += 1;
                        }
                        Sep::Seq
                    }
                    ('|', Some('&')) => {
                        self.pos += 1;
                        Sep::Pipe
                    }
                    ('|', _) => Sep::Pipe,
                    ('(', _) => Sep::Open,
                    (')', _) => Sep::Close,
                    _ => Sep::Seq,
                };
                return Ok(Token::Separator(sep));
            }
            // `<(…)` and `>(…)`: process substitution, a word whose commands run.
            '<' | '>' if self.peek(1) == Some('(') => {}
            '<' | '>' => return Ok(self.redirect()),
            _ => {}
        }
        // A file-descriptor number (or `{name}`) directly before a redirection: `2>`, `1>>`.
        let digits = self.chars[self.pos..self.end]
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .count();
        if digits > 0 && matches!(self.peek(digits), Some('<' | '>')) {
            self.pos += digits;
            return Ok(self.redirect());
        }
        self.word(nested, depth)
    }

    fn word(&mut self, nested: &mut Vec<Simple>, depth: usize) -> Result<Token, Unreadable> {
        let start = self.pos;
        let mut parts: Vec<Part> = Vec::new();
        let mut text = String::new();
        // Unquoted `{` … `}` with a `,` or `..` between: brace expansion.
        let mut brace_open = false;
        let mut brace = false;
        let flush = |parts: &mut Vec<Part>, text: &mut String, quoted: bool| {
            if !text.is_empty() {
                parts.push(Part::Text {
                    text: std::mem::take(text),
                    quoted,
                });
            }
        };
        while let Some(c) = self.peek(0) {
            match c {
                '<' | '>' if self.peek(1) == Some('(') => {
                    flush(&mut parts, &mut text, false);
                    let sub = self.substitution(nested, depth, 1)?;
                    parts.push(Part::Opaque { text: sub });
                }
                ' ' | '\t' | '\r' | '\n' | ';' | '&' | '|' | '(' | ')' | '<' | '>' => break,
                '~' if self.pos == start => {
                    self.pos += 1;
                    let mut user = String::new();
                    while let Some(u) = self.peek(0) {
                        if u.is_ascii_alphanumeric() || matches!(u, '_' | '-' | '.') {
                            user.push(u);
                            self.pos += 1;
                        } else {
                            break;
                        }
                    }
                    if matches!(
                        self.peek(0),
                        None | Some('/' | ' ' | '\t' | '\n' | ';' | '&' | '|' | ')' | ':')
                    ) {
                        parts.push(Part::Tilde(user));
                    } else {
                        text.push('~');
                        text.push_str(&user);
                    }
                }
                '\\' => {
                    self.pos += 1;
                    match self.peek(0) {
                        Some('\n') => self.pos += 1,
                        Some(next) => {
                            flush(&mut parts, &mut text, false);
                            parts.push(Part::Text {
                                text: next.to_string(),
                                quoted: true,
                            });
                            self.pos += 1;
                        }
                        None => {}
                    }
                }
                '\'' => {
                    flush(&mut parts, &mut text, false);
                    self.pos += 1;
                    let mut quoted = String::new();
                    loop {
                        match self.peek(0) {
                            None => return Err(Unreadable::syntax("an unclosed ' quote")),
                            Some('\'') => {
                                self.pos += 1;
                                break;
                            }
                            Some(q) => {
                                quoted.push(q);
                                self.pos += 1;
                            }
                        }
                    }
                    parts.push(Part::Text {
                        text: quoted,
                        quoted: true,
                    });
                }
                '"' => {
                    flush(&mut parts, &mut text, false);
                    self.pos += 1;
                    self.double_quoted(&mut parts, nested, depth)?;
                }
                '$' if self.peek(1) == Some('"') => {
                    // `$"…"`: a translated string, as `"…"`.
                    self.pos += 1;
                }
                '$' if self.peek(1) == Some('\'') => {
                    flush(&mut parts, &mut text, false);
                    self.pos += 2;
                    let decoded = self.ansi_c()?;
                    parts.push(Part::Text {
                        text: decoded,
                        quoted: true,
                    });
                }
                '$' => {
                    if let Some(part) = self.dollar(nested, depth, false)? {
                        flush(&mut parts, &mut text, false);
                        parts.push(part);
                    } else {
                        text.push('$');
                    }
                }
                '`' => {
                    flush(&mut parts, &mut text, false);
                    let inner = self.backticks(nested, depth)?;
                    parts.push(Part::Subst {
                        inner,
                        quoted: false,
                    });
                }
                other => {
                    if other == '{' {
                        brace_open = true;
                    } else if brace_open
                        && (other == ',' || (other == '.' && self.peek(1) == Some('.')))
                    {
                        brace = true;
                    } else if other == '}' && brace {
                        // Checked below: the word expands to several.
                    }
                    text.push(other);
                    self.pos += 1;
                }
            }
        }
        flush(&mut parts, &mut text, false);
        let raw: String = self.chars[start..self.pos].iter().collect();
        let unquoted_brace = brace
            && parts
                .iter()
                .any(|p| matches!(p, Part::Text { text, quoted: false } if text.contains('}')));
        if unquoted_brace {
            return Ok(Token::Word(Word {
                parts: vec![Part::Opaque { text: raw.clone() }],
                raw,
            }));
        }
        Ok(Token::Word(Word { parts, raw }))
    }

    /// The inside of `"…"`, the cursor past the opening quote.
    fn double_quoted(
        &mut self,
        parts: &mut Vec<Part>,
        nested: &mut Vec<Simple>,
        depth: usize,
    ) -> Result<(), Unreadable> {
        let mut text = String::new();
        // An empty `""` is still a word.
        let mut any = false;
        loop {
            match self.peek(0) {
                None => return Err(Unreadable::syntax("an unclosed \" quote")),
                Some('"') => {
                    self.pos += 1;
                    break;
                }
                Some('\\') => {
                    self.pos += 1;
                    match self.peek(0) {
                        Some(e @ ('$' | '`' | '"' | '\\')) => {
                            text.push(e);
                            self.pos += 1;
                        }
                        Some('\n') => self.pos += 1,
                        _ => text.push('\\'),
                    }
                }
                Some('$') => match self.dollar(nested, depth, true)? {
                    Some(part) => {
                        if !text.is_empty() {
                            parts.push(Part::Text {
                                text: std::mem::take(&mut text),
                                quoted: true,
                            });
                        }
                        parts.push(part);
                        any = true;
                    }
                    None => text.push('$'),
                },
                Some('`') => {
                    if !text.is_empty() {
                        parts.push(Part::Text {
                            text: std::mem::take(&mut text),
                            quoted: true,
                        });
                    }
                    let inner = self.backticks(nested, depth)?;
                    parts.push(Part::Subst {
                        inner,
                        quoted: true,
                    });
                    any = true;
                }
                Some(q) => {
                    text.push(q);
                    self.pos += 1;
                }
            }
        }
        if !text.is_empty() || !any {
            parts.push(Part::Text { text, quoted: true });
        }
        Ok(())
    }

    /// A `$…` expansion at the cursor, or `None` (the cursor past the `$`) for a `$` that
    /// is only a character.
    fn dollar(
        &mut self,
        nested: &mut Vec<Simple>,
        depth: usize,
        quoted: bool,
    ) -> Result<Option<Part>, Unreadable> {
        match self.peek(1) {
            Some('(') if self.peek(2) == Some('(') => {
                let text = self.substitution(nested, depth, 1)?;
                Ok(Some(Part::Opaque { text }))
            }
            Some('(') => {
                let text = self.substitution(nested, depth, 1)?;
                let inner = text[2..text.len() - 1].to_string();
                Ok(Some(Part::Subst { inner, quoted }))
            }
            Some('{') => {
                let start = self.pos;
                self.pos += 2;
                let mut level = 1usize;
                while level > 0 {
                    match self.peek(0) {
                        None => return Err(Unreadable::syntax("an unclosed ${ expansion")),
                        Some('{') => level += 1,
                        Some('}') => level -= 1,
                        Some('\\') => self.pos += 1,
                        Some('$') if self.peek(1) == Some('(') => {
                            // Its commands run too.
                            self.substitution(nested, depth, 1)?;
                            continue;
                        }
                        Some(q @ ('\'' | '"')) if !quoted || q == '"' => {
                            self.pos += 1;
                            while self.peek(0).is_some_and(|c| c != q) {
                                self.pos += 1;
                            }
                        }
                        _ => {}
                    }
                    self.pos += 1;
                }
                let text: String = self.chars[start..self.pos].iter().collect();
                let name = &text[2..text.len() - 1];
                Ok(Some(if is_name(name) {
                    Part::Param {
                        name: name.to_string(),
                        quoted,
                    }
                } else {
                    Part::Opaque { text }
                }))
            }
            Some(c) if c.is_ascii_alphabetic() || c == '_' => {
                self.pos += 1;
                let mut name = String::new();
                while let Some(c) = self.peek(0) {
                    if c.is_ascii_alphanumeric() || c == '_' {
                        name.push(c);
                        self.pos += 1;
                    } else {
                        break;
                    }
                }
                Ok(Some(Part::Param { name, quoted }))
            }
            Some(c)
                if c.is_ascii_digit() || matches!(c, '@' | '*' | '#' | '?' | '$' | '!' | '-') =>
            {
                self.pos += 2;
                Ok(Some(Part::Opaque {
                    text: format!("${c}"),
                }))
            }
            _ => {
                self.pos += 1;
                Ok(None)
            }
        }
    }

    /// The inside of `$'…'`, the cursor past the opening quote, decoded as bash does.
    fn ansi_c(&mut self) -> Result<String, Unreadable> {
        let mut out = String::new();
        loop {
            match self.peek(0) {
                None => return Err(Unreadable::syntax("an unclosed $' quote")),
                Some('\'') => {
                    self.pos += 1;
                    return Ok(out);
                }
                Some('\\') => {
                    self.pos += 1;
                    if let Some(c) = self.ansi_c_escape() {
                        out.push(c);
                    }
                }
                Some(q) => {
                    out.push(q);
                    self.pos += 1;
                }
            }
        }
    }

    /// One escape of `$'…'` after its backslash, as bash decodes it: `\n`, `\x2d`, `\055`,
    /// `\u002d`… (`None` for a lone trailing backslash).
    fn ansi_c_escape(&mut self) -> Option<char> {
        let e = self.peek(0)?;
        self.pos += 1;
        let number = |lexer: &mut Self, radix: u32, most: usize| {
            let mut value = 0u32;
            let mut taken = 0;
            while taken < most
                && let Some(d) = lexer.peek(0).and_then(|c| c.to_digit(radix))
            {
                value = value * radix + d;
                lexer.pos += 1;
                taken += 1;
            }
            (taken > 0).then(|| char::from_u32(value).unwrap_or('\u{fffd}'))
        };
        Some(match e {
            'n' => '\n',
            't' => '\t',
            'r' => '\r',
            'a' => '\u{7}',
            'b' => '\u{8}',
            'e' | 'E' => '\u{1b}',
            'f' => '\u{c}',
            'v' => '\u{b}',
            'x' => number(self, 16, 2).unwrap_or('x'),
            'u' => number(self, 16, 4).unwrap_or('u'),
            'U' => number(self, 16, 8).unwrap_or('U'),
            'c' => {
                // `\cX`: a control character.
                let x = self.peek(0)?;
                self.pos += 1;
                char::from_u32((x as u32) & 0x1f).unwrap_or('\u{fffd}')
            }
            '0'..='7' => {
                self.pos -= 1;
                number(self, 8, 3).unwrap_or('0')
            }
            other => other,
        })
    }

    fn redirect(&mut self) -> Token {
        let first = self.peek(0);
        self.pos += 1;
        let plain = |writes: bool| Token::Redirect {
            writes,
            heredoc: false,
            dup: false,
            herestring: false,
        };
        match (first, self.peek(0)) {
            (Some('<'), Some('<')) => {
                self.pos += 1;
                if self.peek(0) == Some('<') {
                    // `<<<` here-string: the next word is input, not a delimiter.
                    self.pos += 1;
                    return Token::Redirect {
                        writes: false,
                        heredoc: false,
                        dup: false,
                        herestring: true,
                    };
                }
                if self.peek(0) == Some('-') {
                    self.pos += 1;
                }
                Token::Redirect {
                    writes: false,
                    heredoc: true,
                    dup: false,
                    herestring: false,
                }
            }
            (Some('<'), Some('>')) => {
                self.pos += 1;
                plain(true)
            }
            (Some('<'), Some('&')) => {
                self.pos += 1;
                plain(false)
            }
            (Some('<'), _) => plain(false),
            (_, Some('&')) => {
                // `>&2` is a descriptor, `>&file` a file (bash).
                self.pos += 1;
                Token::Redirect {
                    writes: false,
                    heredoc: false,
                    dup: true,
                    herestring: false,
                }
            }
            (_, Some('>' | '|')) => {
                self.pos += 1;
                plain(true)
            }
            _ => plain(true),
        }
    }

    /// `$(…)`, `<(…)`, `>(…)` (or `$((…))`, arithmetic, kept as text) at the cursor, `skip`
    /// characters before its `(`: parses its commands into `nested` and returns its text.
    fn substitution(
        &mut self,
        nested: &mut Vec<Simple>,
        depth: usize,
        skip: usize,
    ) -> Result<String, Unreadable> {
        if depth >= MAX_DEPTH {
            return Err(Unreadable::syntax("commands nested too deeply"));
        }
        let start = self.pos;
        self.pos += skip + 1;
        let arithmetic = self.peek(0) == Some('(');
        let inner_start = self.pos;
        let mut level = 1;
        // Here-documents opened inside: their bodies (after the next newline) are text, not
        // parentheses or quotes (`git commit -m "$(cat <<'EOF' … don't … EOF )"`).
        let mut heredocs: Vec<String> = Vec::new();
        while level > 0 {
            match self.peek(0) {
                None => return Err(Unreadable::syntax("an unclosed $( substitution")),
                Some('(') => level += 1,
                Some(')') => level -= 1,
                Some('\\') => self.pos += 1,
                Some('<') if self.peek(1) == Some('<') && self.peek(2) != Some('<') => {
                    self.pos += 2;
                    if self.peek(0) == Some('-') {
                        self.pos += 1;
                    }
                    while matches!(self.peek(0), Some(' ' | '\t')) {
                        self.pos += 1;
                    }
                    let mut delimiter = String::new();
                    while let Some(c) = self.peek(0) {
                        if c.is_whitespace() || matches!(c, ';' | '&' | '|' | '(' | ')' | '<' | '>')
                        {
                            break;
                        }
                        if !matches!(c, '\'' | '"' | '\\') {
                            delimiter.push(c);
                        }
                        self.pos += 1;
                    }
                    heredocs.push(delimiter);
                    continue;
                }
                Some('\n') if !heredocs.is_empty() => {
                    self.pos += 1;
                    for delimiter in std::mem::take(&mut heredocs) {
                        let _ = self.heredoc_body(&delimiter);
                    }
                    continue;
                }
                Some('#')
                    if self.pos == inner_start || self.chars[self.pos - 1].is_whitespace() =>
                {
                    // A comment runs to the end of its line.
                    while self.peek(0).is_some_and(|c| c != '\n') {
                        self.pos += 1;
                    }
                    continue;
                }
                Some(q @ ('\'' | '"')) => {
                    self.pos += 1;
                    while self.peek(0).is_some_and(|c| c != q) {
                        if q == '"' && self.peek(0) == Some('\\') {
                            self.pos += 1;
                        }
                        self.pos += 1;
                    }
                    if self.peek(0).is_none() {
                        return Err(Unreadable::syntax(format!("an unclosed {q} quote")));
                    }
                }
                _ => {}
            }
            self.pos += 1;
        }
        if !arithmetic {
            let mut inner = Lexer {
                chars: self.chars.clone(),
                pos: inner_start,
                end: self.pos - 1,
                budget: self.budget,
            };
            let result = inner.run(nested, depth + 1, true);
            self.budget = inner.budget;
            result?;
        }
        Ok(self.chars[start..self.pos].iter().collect())
    }

    /// The commands of the `$(…)` and backticks in `text`, read as the shell reads the body of
    /// a here-document with an unquoted delimiter (as inside double quotes).
    fn substitutions_in(&mut self, text: &str, depth: usize) -> Result<Vec<Simple>, Unreadable> {
        if !text.contains("$(") && !text.contains('`') {
            return Ok(Vec::new());
        }
        // A backslash means there what it means inside double quotes; a `"` is only a character.
        let quoted = format!("\"{}\"", text.replace('"', "\\\""));
        let mut out = Vec::new();
        self.nested(&quoted, &mut out, depth)?;
        // The last is the body itself, as one word.
        out.pop();
        Ok(out)
    }

    /// A backtick substitution at the cursor: its commands go into `nested`; returns the
    /// text inside.
    fn backticks(&mut self, nested: &mut Vec<Simple>, depth: usize) -> Result<String, Unreadable> {
        if depth >= MAX_DEPTH {
            return Err(Unreadable::syntax("commands nested too deeply"));
        }
        self.pos += 1;
        let mut inner = String::new();
        loop {
            match self.peek(0) {
                None => return Err(Unreadable::syntax("an unclosed ` substitution")),
                Some('`') => {
                    self.pos += 1;
                    break;
                }
                Some('\\') => {
                    self.pos += 1;
                    if let Some(e) = self.peek(0) {
                        if !matches!(e, '`' | '\\' | '$') {
                            inner.push('\\');
                        }
                        inner.push(e);
                        self.pos += 1;
                    }
                }
                Some(c) => {
                    inner.push(c);
                    self.pos += 1;
                }
            }
        }
        self.nested(&inner, nested, depth)?;
        Ok(inner)
    }
}

#[cfg(test)]
mod tests;
