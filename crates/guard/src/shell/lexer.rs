//! The reader's words: quotes, escapes, `$'…'`, parameters, substitutions (whose commands it
//! reads into the list, on the line's budget), redirection operators.

use super::word::{Part, Simple, Word, is_name};
use super::{Lexer, MAX_DEPTH, Redirect, Sep, Token, Unreadable};

impl Lexer {
    pub(super) fn token(
        &mut self,
        nested: &mut Vec<Simple>,
        depth: usize,
    ) -> Result<Token, Unreadable> {
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
                    return Ok(Token::Redirect(Redirect::Write));
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
        while let Some(c) = self.peek(0) {
            match c {
                '<' | '>' if self.peek(1) == Some('(') => {
                    flush(&mut parts, &mut text);
                    let sub = self.substitution(nested, depth, 1)?;
                    parts.push(Part::Opaque { text: sub });
                }
                ' ' | '\t' | '\r' | '\n' | ';' | '&' | '|' | '(' | ')' | '<' | '>' => break,
                // A tilde starts a word, or follows `NAME=` or a `:` in an assignment.
                '~' if self.pos == start || (parts.is_empty() && tilde_may_follow(&text)) => {
                    match self.tilde_prefix(self.pos != start) {
                        Some(user) => {
                            self.pos += 1 + user.chars().count();
                            flush(&mut parts, &mut text);
                            parts.push(Part::Tilde(user));
                        }
                        None => {
                            text.push('~');
                            self.pos += 1;
                        }
                    }
                }
                '\\' => {
                    self.pos += 1;
                    match self.peek(0) {
                        // A line continuation.
                        Some('\n') => self.pos += 1,
                        Some(next) => {
                            self.pos += 1;
                            flush(&mut parts, &mut text);
                            parts.push(quoted(next.to_string()));
                        }
                        None => {}
                    }
                }
                '\'' => {
                    flush(&mut parts, &mut text);
                    parts.push(quoted(self.single_quoted()?));
                }
                '"' => {
                    flush(&mut parts, &mut text);
                    self.pos += 1;
                    self.double_quoted(&mut parts, nested, depth)?;
                }
                '$' if self.peek(1) == Some('"') => {
                    // `$"…"`: a translated string, as `"…"`.
                    self.pos += 1;
                }
                '$' if self.peek(1) == Some('\'') => {
                    flush(&mut parts, &mut text);
                    self.pos += 2;
                    parts.push(quoted(self.ansi_c()?));
                }
                '$' => {
                    if let Some(part) = self.dollar(nested, depth, false)? {
                        flush(&mut parts, &mut text);
                        parts.push(part);
                    } else {
                        text.push('$');
                    }
                }
                '`' => {
                    flush(&mut parts, &mut text);
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
                    }
                    text.push(other);
                    self.pos += 1;
                }
            }
        }
        flush(&mut parts, &mut text);
        let raw: String = self.chars[start..self.pos].iter().collect();
        let unquoted_brace = brace
            && parts
                .iter()
                .any(|p| matches!(p, Part::Text { text, quoted: false } if text.contains('}')));
        if unquoted_brace {
            // The word expands to several: it is only its text.
            parts = vec![Part::Opaque { text: raw.clone() }];
        }
        Ok(Token::Word(Word { parts, raw }))
    }

    /// The user of a tilde prefix at the cursor (`~` alone: empty), when it is one bash
    /// expands. The prefix runs to a `/` (or a `:` in an assignment) or the word's end; with
    /// a quote or an expansion in it, it is only text (bash's rule).
    fn tilde_prefix(&self, assignment: bool) -> Option<String> {
        let mut at = 1;
        while let Some(u) = self.peek(at) {
            if u == '/' || (assignment && u == ':') {
                break;
            }
            if matches!(
                u,
                ' ' | '\t' | '\r' | '\n' | ';' | '&' | '|' | '(' | ')' | '<' | '>'
            ) {
                break;
            }
            if matches!(u, '\'' | '"' | '\\' | '$' | '`') {
                return None;
            }
            at += 1;
        }
        // A name no login can have (`~x=y`, `~%s`) is looked up, not found, and left
        // as written.
        let user: String = self.chars[self.pos + 1..self.pos + at].iter().collect();
        user.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
            .then_some(user)
    }

    /// `'…'`, the cursor on the opening quote: its text, the cursor past the closing one.
    fn single_quoted(&mut self) -> Result<String, Unreadable> {
        self.pos += 1;
        let mut quoted = String::new();
        loop {
            match self.peek(0) {
                None => return Err(Unreadable::syntax("an unclosed ' quote")),
                Some('\'') => {
                    self.pos += 1;
                    return Ok(quoted);
                }
                Some(q) => {
                    quoted.push(q);
                    self.pos += 1;
                }
            }
        }
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
        // bash ends the value at a NUL (`$'a\x00b'c` is `ac`): what follows it up to the
        // closing quote is read, and dropped.
        let mut dropped = String::new();
        loop {
            let sink = if out.ends_with('\0') || !dropped.is_empty() {
                if out.ends_with('\0') {
                    out.pop();
                    dropped.push('\0');
                }
                &mut dropped
            } else {
                &mut out
            };
            match self.peek(0) {
                None => return Err(Unreadable::syntax("an unclosed $' quote")),
                Some('\'') => {
                    self.pos += 1;
                    return Ok(out);
                }
                Some('\\') => {
                    self.pos += 1;
                    self.ansi_c_escape(sink);
                }
                Some(q) => {
                    sink.push(q);
                    self.pos += 1;
                }
            }
        }
    }

    /// One escape of `$'…'` after its backslash, as bash decodes it: `\n`, `\x2d`, `\055`,
    /// `\u002d`…; an escape bash does not know keeps its backslash (`\q`, `\x` without a
    /// digit).
    fn ansi_c_escape(&mut self, out: &mut String) {
        let Some(e) = self.peek(0) else {
            out.push('\\');
            return;
        };
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
        let decoded = match e {
            'n' => Some('\n'),
            't' => Some('\t'),
            'r' => Some('\r'),
            'a' => Some('\u{7}'),
            'b' => Some('\u{8}'),
            'e' | 'E' => Some('\u{1b}'),
            'f' => Some('\u{c}'),
            'v' => Some('\u{b}'),
            '\\' | '\'' | '"' | '?' => Some(e),
            'x' => number(self, 16, 2),
            'u' => number(self, 16, 4),
            'U' => number(self, 16, 8),
            'c' => self.peek(0).map(|x| {
                // `\cX`: a control character.
                self.pos += 1;
                char::from_u32((x as u32) & 0x1f).unwrap_or('\u{fffd}')
            }),
            // bash keeps the low eight bits: `$'\547'` is `g`.
            '0'..='7' => {
                self.pos -= 1;
                number(self, 8, 3).map(|c| char::from(u32::from(c) as u8))
            }
            _ => None,
        };
        match decoded {
            Some(c) => out.push(c),
            None => {
                out.push('\\');
                out.push(e);
            }
        }
    }

    pub(super) fn redirect(&mut self) -> Token {
        let first = self.peek(0);
        self.pos += 1;
        match (first, self.peek(0)) {
            (Some('<'), Some('<')) => {
                self.pos += 1;
                if self.peek(0) == Some('<') {
                    // `<<<` here-string: the next word is input, not a delimiter.
                    self.pos += 1;
                    return Token::Redirect(Redirect::HereString);
                }
                if self.peek(0) == Some('-') {
                    self.pos += 1;
                }
                Token::Redirect(Redirect::HereDoc)
            }
            (Some('<'), Some('>')) => {
                self.pos += 1;
                Token::Redirect(Redirect::Write)
            }
            (Some('<'), Some('&')) => {
                self.pos += 1;
                Token::Redirect(Redirect::Read)
            }
            (Some('<'), _) => Token::Redirect(Redirect::Read),
            (_, Some('&')) => {
                // `>&2` is a descriptor, `>&file` a file (bash).
                self.pos += 1;
                Token::Redirect(Redirect::Dup)
            }
            (_, Some('>' | '|')) => {
                self.pos += 1;
                Token::Redirect(Redirect::Write)
            }
            _ => Token::Redirect(Redirect::Write),
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
        // `$((…))` is arithmetic; `<((…) …)` is a process substitution that opens a subshell.
        let arithmetic = self.chars[start] == '$' && self.peek(0) == Some('(');
        // bash reads what follows `((` as arithmetic first, where `#` starts no comment: a
        // quote it then finds unclosed is a syntax error, even where a command would have
        // commented it out (`>((git #'…`). Refused alike.
        if self.peek(0) == Some('(') {
            self.arithmetic_quotes_close()?;
        }
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
                // `<<<` is a here-string, not a here-document.
                Some('<') if self.peek(1) == Some('<') && self.peek(2) == Some('<') => {
                    self.pos += 3;
                    continue;
                }
                // `${…}`, whose `)` (`${x:-)}`) closes nothing.
                Some('$') if self.peek(1) == Some('{') => {
                    self.skip_braced_parameter();
                    continue;
                }
                // `$'…'`, where `\'` does not end the quote.
                Some('$') if self.peek(1) == Some('\'') => {
                    self.pos += 2;
                    while let Some(c) = self.peek(0) {
                        self.pos += 1;
                        match c {
                            '\\' => self.pos += 1,
                            '\'' => break,
                            _ => {}
                        }
                    }
                    continue;
                }
                Some('<') if self.peek(1) == Some('<') && self.peek(2) != Some('<') => {
                    heredocs.push(self.heredoc_delimiter());
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
                Some(q @ ('\'' | '"')) => self.skip_quoted(q, depth)?,
                _ => {}
            }
            self.pos += 1;
        }
        // A `case` pattern's `)` would have ended the scan above too early: refused, not
        // misread (`$(case a in a) rm x;; esac)`).
        if has_case(&self.chars[inner_start..self.pos - 1]) {
            return Err(Unreadable::syntax("a `case` inside a substitution"));
        }
        self.read_substitution(nested, depth, inner_start, arithmetic)?;
        Ok(self.chars[start..self.pos].iter().collect())
    }

    /// The inside of a substitution just scanned, from `inner_start` to before its `)`: its
    /// commands, or the substitutions in its arithmetic.
    fn read_substitution(
        &mut self,
        nested: &mut Vec<Simple>,
        depth: usize,
        inner_start: usize,
        arithmetic: bool,
    ) -> Result<(), Unreadable> {
        if arithmetic {
            // `$(( $(…) ))`: arithmetic runs the substitutions in it.
            let text: String = self.chars[inner_start..self.pos - 1].iter().collect();
            if text.contains("$(") || text.contains('`') {
                nested.extend(self.substitutions_in(&text, depth)?);
            }
        } else {
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
        Ok(())
    }

    /// `${…}` at the cursor, stepped over.
    fn skip_braced_parameter(&mut self) {
        self.pos += 2;
        let mut braces = 1usize;
        while let Some(c) = self.peek(0) {
            self.pos += 1;
            match c {
                '\\' => self.pos += 1,
                '{' => braces += 1,
                '}' => {
                    braces -= 1;
                    if braces == 0 {
                        break;
                    }
                }
                _ => {}
            }
        }
    }

    /// `<<DELIM` or `<<-DELIM` at the cursor: the delimiter, its quotes taken out.
    fn heredoc_delimiter(&mut self) -> String {
        self.pos += 2;
        if self.peek(0) == Some('-') {
            self.pos += 1;
        }
        while matches!(self.peek(0), Some(' ' | '\t')) {
            self.pos += 1;
        }
        let mut delimiter = String::new();
        while let Some(c) = self.peek(0) {
            if c.is_whitespace() || matches!(c, ';' | '&' | '|' | '(' | ')' | '<' | '>') {
                break;
            }
            if !matches!(c, '\'' | '"' | '\\') {
                delimiter.push(c);
            }
            self.pos += 1;
        }
        delimiter
    }

    /// A quoted text inside a substitution being scanned, the cursor on its opening quote `q`;
    /// left on its closing one.
    fn skip_quoted(&mut self, q: char, depth: usize) -> Result<(), Unreadable> {
        self.pos += 1;
        while self.peek(0).is_some_and(|c| c != q) {
            // An escaped character is only that: `"\$("` opens nothing.
            if q == '"' && self.peek(0) == Some('\\') {
                self.pos += 2;
                continue;
            }
            // A `$(…)` inside double quotes holds quotes of its own: stepped over
            // whole (its commands are read with the rest of this substitution).
            if q == '"' && self.peek(0) == Some('$') && self.peek(1) == Some('(') {
                let mut scratch = Vec::new();
                self.substitution(&mut scratch, depth + 1, 1)?;
                continue;
            }
            self.pos += 1;
        }
        if self.peek(0).is_none() {
            return Err(Unreadable::syntax(format!("an unclosed {q} quote")));
        }
        Ok(())
    }

    /// From the cursor (inside `((`), whether every quote closes before the parentheses do,
    /// `#` being no comment: bash's first reading of `((`. The cursor does not move.
    fn arithmetic_quotes_close(&self) -> Result<(), Unreadable> {
        let mut at = self.pos;
        let mut level = 1usize;
        while level > 0 {
            let Some(&c) = self.chars.get(at).filter(|_| at < self.end) else {
                // The substitution's own scan says what is unclosed.
                return Ok(());
            };
            at += 1;
            match c {
                '\\' => at += 1,
                '(' => level += 1,
                ')' => level -= 1,
                '\'' | '"' => {
                    while at < self.end && self.chars[at] != c {
                        if c == '"' && self.chars[at] == '\\' {
                            at += 1;
                        }
                        at += 1;
                    }
                    if at >= self.end {
                        return Err(Unreadable::syntax(format!("an unclosed {c} quote")));
                    }
                    at += 1;
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// The commands of the `$(…)` and backticks in `text`, read as the shell reads the body of
    /// a here-document with an unquoted delimiter (as inside double quotes).
    pub(super) fn substitutions_in(
        &mut self,
        text: &str,
        depth: usize,
    ) -> Result<Vec<Simple>, Unreadable> {
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

/// The word `case` in scanned text.
fn has_case(scanned: &[char]) -> bool {
    scanned.windows(4).enumerate().any(|(at, w)| {
        w == ['c', 'a', 's', 'e']
            && (at == 0 || !scanned[at - 1].is_alphanumeric() && scanned[at - 1] != '_')
            && scanned.get(at + 4).is_none_or(|c| c.is_whitespace())
    })
}

/// A tilde after `text`, the start of an unquoted word, is a tilde prefix: after `NAME=` or
/// a `:` in an assignment.
fn tilde_may_follow(text: &str) -> bool {
    (text.ends_with('=') && is_name(&text[..text.len() - 1]))
        || (text.ends_with(':') && text.split_once('=').is_some_and(|(n, _)| is_name(n)))
}

/// The unquoted text read so far, as a part of its own.
fn flush(parts: &mut Vec<Part>, text: &mut String) {
    if !text.is_empty() {
        parts.push(Part::Text {
            text: std::mem::take(text),
            quoted: false,
        });
    }
}

/// Text that was quoted.
fn quoted(text: String) -> Part {
    Part::Text { text, quoted: true }
}
