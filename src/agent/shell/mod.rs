//! A POSIX shell command line read as the guard needs it: every simple command it would run,
//! across `;`, `&&`, `||`, `|`, `&`, newlines, subshells, compound commands, `$(…)`,
//! backticks and here-documents, each word kept as its parts (literal text, parameters,
//! substitutions) so the guard can tell what it knows from what it cannot. It never runs or
//! expands anything. One pass over the input, in linear time.

mod lexer;
mod word;

pub use word::{Joint, Part, Simple, Stdin, Word, is_name};

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
                        // `function NAME [()] BODY`: its name is no command either.
                        if word.raw == "function" {
                            let _name = self.token(&mut current.before, depth)?;
                            if self.peek_past_blanks() == Some('(') {
                                let _ = self.token(&mut current.before, depth)?;
                                self.next_is_close();
                            }
                            continue;
                        }
                        if word.raw == "case" {
                            current.case_header = true;
                        }
                        if word.raw == "((" {
                            // Arithmetic runs the substitutions in it (an array subscript's too).
                            let text = self.skip_arithmetic();
                            if text.contains("$(") || text.contains('`') {
                                let subs = self.substitutions_in(&text, depth)?;
                                current.before.extend(subs);
                            }
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
                            if array.contains("$(") || array.contains('`') {
                                let subs = self.substitutions_in(&array, depth)?;
                                current.before.extend(subs);
                            }
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
                    // `NAME() BODY`: a function's definition; its name is no command.
                    if sep == Sep::Open
                        && current.simple.words.len() == 1
                        && current.simple.assignments.is_empty()
                        && current.before.is_empty()
                        && self.next_is_close()
                    {
                        current = Pending::default();
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

    /// The next character past blanks.
    fn peek_past_blanks(&self) -> Option<char> {
        let mut at = 0;
        while matches!(self.peek(at), Some(' ' | '\t')) {
            at += 1;
        }
        self.peek(at)
    }

    /// The next token is `)`: consumed when it is.
    fn next_is_close(&mut self) -> bool {
        let mut at = 0;
        while matches!(self.peek(at), Some(' ' | '\t')) {
            at += 1;
        }
        if self.peek(at) == Some(')') {
            self.pos += at + 1;
            true
        } else {
            false
        }
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
            let raw = self.heredoc_body(&delimiter);
            let runs = expands && raw.contains(['$', '`']);
            let subs = if runs {
                self.substitutions_in(&raw, depth)?
            } else {
                Vec::new()
            };
            // An unquoted delimiter: the shell takes `\$`, `\``, `\\` and `\<newline>` as in
            // double quotes, and passes the rest on.
            let body = if expands { unescape_heredoc(&raw) } else { raw };
            let expands = runs;
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
    fn skip_arithmetic(&mut self) -> String {
        let start = self.pos;
        let mut level = 2usize;
        while let Some(c) = self.peek(0) {
            self.pos += 1;
            match c {
                '(' => level += 1,
                ')' => {
                    level -= 1;
                    if level == 0 {
                        break;
                    }
                }
                _ => {}
            }
        }
        self.chars[start..self.pos].iter().collect()
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
}

/// A here-document body as the shell passes it on when its delimiter is unquoted.
fn unescape_heredoc(body: &str) -> String {
    let mut out = String::with_capacity(body.len());
    let mut chars = body.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.peek() {
                Some('$' | '`' | '\\') => {
                    out.extend(chars.next());
                    continue;
                }
                Some('\n') => {
                    chars.next();
                    continue;
                }
                _ => {}
            }
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests;
