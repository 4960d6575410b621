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
    Redirect(Redirect),
    End,
}

/// A redirection operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Redirect {
    /// `<`, `<&`: reads the file its target names.
    Read,
    /// `>`, `>>`, `>|`, `<>`, `&>`: writes it.
    Write,
    /// `<<`, `<<-`: a here-document, whose target is its delimiter.
    HereDoc,
    /// `>&`: writes the file its target names unless that is a descriptor.
    Dup,
    /// `<<<`: the target is the input itself.
    HereString,
}

/// A command being read, with the commands its substitutions run (they run first).
#[derive(Default)]
struct Pending {
    before: Vec<Simple>,
    simple: Simple,
    /// Set when the command is a `case WORD in` header: its patterns follow.
    case_header: bool,
}

/// Where [`Lexer::run`] is in one line: the commands read so far and what encloses the next.
struct Reading {
    finished: Vec<Pending>,
    current: Pending,
    /// Here-documents whose bodies start after the next newline: (delimiter, expands,
    /// index of their command in `finished`, or past its end for `current`).
    heredocs: Vec<(String, bool, usize)>,
    joint: Joint,
    /// The line is a substitution's.
    nested: bool,
    groups: usize,
    /// Inside `if`, `while`, `for`, `{ … }`…: what runs there may not run.
    compound: usize,
    /// Inside `case … in`: a command position holds patterns up to `)` first.
    case_depth: usize,
    in_patterns: bool,
    /// The previous command ended with a compound command's closing word or `)`.
    after_compound: bool,
}

impl Reading {
    fn new(nested: bool) -> Self {
        Reading {
            finished: Vec::new(),
            current: Pending::default(),
            heredocs: Vec::new(),
            joint: Joint::Seq,
            nested,
            groups: 0,
            compound: 0,
            case_depth: 0,
            in_patterns: false,
            after_compound: false,
        }
    }

    /// The command being read is whole: it joins the previous one by the last separator,
    /// inside whatever encloses it.
    fn finish(&mut self) {
        self.current.simple.joint = self.joint;
        self.current.simple.nested = self.nested || self.groups > 0 || self.compound > 0;
        self.finished.push(std::mem::take(&mut self.current));
    }
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
        let mut r = Reading::new(nested);
        loop {
            match self.token(&mut r.current.before, depth)? {
                Token::Word(word) => self.word_token(&mut r, word, depth)?,
                Token::Redirect(redirect) => self.redirection(&mut r, redirect, depth)?,
                Token::Separator(sep) => self.separator(&mut r, sep, depth)?,
                Token::End => {
                    let current = &r.current;
                    if !current.simple.words.is_empty()
                        || !current.simple.assignments.is_empty()
                        || !current.simple.writes.is_empty()
                        || !current.simple.reads.is_empty()
                        || !current.before.is_empty()
                        || current.simple.stdin.is_some()
                    {
                        r.finish();
                    }
                    self.read_heredocs(&mut r, depth)?;
                    break;
                }
            }
        }
        emit(r.finished, out);
        Ok(())
    }

    /// A word: a keyword that opens or closes a compound command, a `case` pattern, an
    /// assignment, or one of the command's words.
    fn word_token(&mut self, r: &mut Reading, word: Word, depth: usize) -> Result<(), Unreadable> {
        self.spend()?;
        let at_start = r.current.simple.words.is_empty();
        if r.in_patterns {
            // `pat)`, `pat|pat)`: read up to the `)`.
            if word.raw == "esac" {
                r.in_patterns = false;
                r.case_depth = r.case_depth.saturating_sub(1);
                r.compound = r.compound.saturating_sub(1);
                r.after_compound = true;
            }
            return Ok(());
        }
        if at_start
            && r.current.simple.assignments.is_empty()
            && self.keyword(r, &word, depth)? == Keyword::Read
        {
            return Ok(());
        }
        if r.current.case_header && word.raw == "in" && r.current.simple.words.len() == 2 {
            r.current.simple.words.push(word);
            r.case_depth += 1;
            r.in_patterns = true;
            r.finish();
            return Ok(());
        }
        r.after_compound = false;
        if !(at_start && word.assignment().is_some()) {
            r.current.simple.words.push(word);
            return Ok(());
        }
        // `arr=(a b)`: an array, read whole.
        if word.raw.ends_with('=') && self.peek(0) == Some('(') {
            let array = self.balanced_parens()?;
            if array.contains("$(") || array.contains('`') {
                let subs = self.substitutions_in(&array, depth)?;
                r.current.before.extend(subs);
            }
            let mut word = word;
            word.raw.push_str(&array);
            word.parts.push(Part::Opaque { text: array });
            r.current.simple.assignments.push(word);
            return Ok(());
        }
        r.current.simple.assignments.push(word);
        Ok(())
    }

    /// A word where a command starts: [`Keyword::Read`] when it is a keyword that is no
    /// command word (`if`, `fi`, `function NAME`, `(( … ))`), read here.
    fn keyword(
        &mut self,
        r: &mut Reading,
        word: &Word,
        depth: usize,
    ) -> Result<Keyword, Unreadable> {
        let raw = word.raw.as_str();
        if CLOSING_KEYWORDS.contains(&raw) {
            r.after_compound = true;
            r.compound = r.compound.saturating_sub(1);
            return Ok(Keyword::Read);
        }
        if PREFIX_KEYWORDS.contains(&raw) {
            if matches!(raw, "if" | "while" | "until" | "{") {
                r.compound += 1;
            }
            r.after_compound = false;
            return Ok(Keyword::Read);
        }
        if matches!(raw, "for" | "select" | "case") {
            r.compound += 1;
        }
        match raw {
            // `function NAME [()] BODY`: its name is no command either.
            "function" => {
                let _name = self.token(&mut r.current.before, depth)?;
                if self.peek_past_blanks() == Some('(') {
                    let _ = self.token(&mut r.current.before, depth)?;
                    self.next_is_close();
                }
                Ok(Keyword::Read)
            }
            "case" => {
                r.current.case_header = true;
                Ok(Keyword::Word)
            }
            "((" => {
                // Arithmetic runs the substitutions in it (an array subscript's too).
                let text = self.skip_arithmetic();
                if text.contains("$(") || text.contains('`') {
                    let subs = self.substitutions_in(&text, depth)?;
                    r.current.before.extend(subs);
                }
                Ok(Keyword::Read)
            }
            _ => Ok(Keyword::Word),
        }
    }

    /// A redirection and its target: a file read or written, a here-document's delimiter,
    /// a here-string's text.
    fn redirection(
        &mut self,
        r: &mut Reading,
        redirect: Redirect,
        depth: usize,
    ) -> Result<(), Unreadable> {
        let raw_start = self.pos;
        let target = match self.token(&mut r.current.before, depth)? {
            Token::Word(w) => w,
            _ => return Err(Unreadable::syntax("a redirection without a target")),
        };
        let simple = &mut r.current.simple;
        match redirect {
            Redirect::HereDoc => {
                // `<<EOF` expands `$…` in the body; `<<'EOF'` and `<<\EOF` do not.
                let expands = !self.chars[raw_start..self.pos]
                    .iter()
                    .any(|c| matches!(c, '\'' | '"' | '\\'));
                r.heredocs.push((target.text(), expands, r.finished.len()));
            }
            Redirect::HereString => {
                let expands = target.literal().is_none();
                simple.stdin = Some(Stdin::Text {
                    text: target.text(),
                    expands,
                });
            }
            Redirect::Dup => {
                let descriptor = target.raw == "-"
                    || (!target.raw.is_empty() && target.raw.chars().all(|c| c.is_ascii_digit()));
                if !descriptor {
                    simple.writes.push(target);
                }
            }
            Redirect::Write => simple.writes.push(target),
            Redirect::Read => simple.reads.push(target),
        }
        Ok(())
    }

    /// A separator: the command before it is whole, and the next one joins it by it.
    fn separator(&mut self, r: &mut Reading, sep: Sep, depth: usize) -> Result<(), Unreadable> {
        if r.in_patterns {
            if sep == Sep::Close {
                r.in_patterns = false;
            }
            return Ok(());
        }
        let current = &r.current;
        // `NAME() BODY`: a function's definition; its name is no command.
        if sep == Sep::Open
            && current.simple.words.len() == 1
            && current.simple.assignments.is_empty()
            && current.before.is_empty()
            && self.next_is_close()
        {
            r.current = Pending::default();
            return Ok(());
        }
        let empty = current.simple.words.is_empty()
            && current.simple.assignments.is_empty()
            && current.simple.writes.is_empty()
            && current.before.is_empty();
        if !empty || !current.simple.reads.is_empty() {
            self.spend()?;
            r.finish();
        }
        match sep {
            Sep::Open => {
                r.groups += 1;
                r.joint = Joint::Seq;
            }
            Sep::Close => {
                r.groups = r.groups.saturating_sub(1);
                r.after_compound = true;
            }
            Sep::Pipe => {
                r.joint = Joint::Pipe;
                if r.after_compound || empty {
                    // Mark the next command's stdin as a compound's output.
                    r.current.simple.stdin = Some(Stdin::Compound);
                }
            }
            Sep::And => r.joint = Joint::And,
            Sep::Or => r.joint = Joint::Or,
            Sep::Seq | Sep::Newline => r.joint = Joint::Seq,
        }
        if sep != Sep::Close && sep != Sep::Pipe {
            r.after_compound = false;
        }
        if r.case_depth > 0 && matches!(sep, Sep::Seq) && self.after_double_semicolon() {
            r.in_patterns = true;
        }
        if sep == Sep::Newline {
            self.read_heredocs(r, depth)?;
        }
        Ok(())
    }

    /// How many blanks are at the cursor.
    fn blanks(&self) -> usize {
        let mut at = 0;
        while matches!(self.peek(at), Some(' ' | '\t')) {
            at += 1;
        }
        at
    }

    /// The next character past blanks.
    fn peek_past_blanks(&self) -> Option<char> {
        self.peek(self.blanks())
    }

    /// The next token is `)`: consumed when it is.
    fn next_is_close(&mut self) -> bool {
        let at = self.blanks();
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
    fn read_heredocs(&mut self, r: &mut Reading, depth: usize) -> Result<(), Unreadable> {
        for (delimiter, expands, index) in std::mem::take(&mut r.heredocs) {
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
            let pending = match r.finished.get_mut(index) {
                Some(p) => p,
                None => &mut r.current,
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

/// What [`Lexer::keyword`] made of a word at a command's start.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Keyword {
    /// A keyword, read: no word of the command.
    Read,
    /// The command's first word (`case` and `for` among them).
    Word,
}

/// The commands read, in the order they run: each one's substitutions first. The command
/// before a `|` at this level is what the next one reads.
fn emit(finished: Vec<Pending>, out: &mut Vec<Simple>) {
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
            previous = Some(producer(&simple));
            out.push(simple);
        }
    }
}

/// `simple` as the next command of a pipe sees it: its words and reads, and its stdin only
/// when that is text (a pipe into it is a compound's output by then).
fn producer(simple: &Simple) -> Simple {
    Simple {
        assignments: Vec::new(),
        words: simple.words.clone(),
        writes: Vec::new(),
        reads: simple.reads.clone(),
        stdin: match &simple.stdin {
            Some(Stdin::Text { text, expands }) => Some(Stdin::Text {
                text: text.clone(),
                expands: *expands,
            }),
            Some(_) => Some(Stdin::Compound),
            None => None,
        },
        joint: simple.joint,
        nested: simple.nested,
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
