//! A POSIX shell command line read as the guard needs it: every simple command it would run,
//! across `;`, `&&`, `||`, `|`, `&`, newlines, subshells, `$(…)`, backticks and here-documents,
//! with quotes removed and output redirections kept apart. It never runs or expands anything:
//! a word with an expansion keeps its text (`$HOME` stays `$HOME`).

/// One simple command: `VAR=x program args… >target`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Simple {
    /// Leading `NAME=value` words.
    pub assignments: Vec<String>,
    pub words: Vec<String>,
    /// Targets of `>`, `>>`, `>|`, `&>`, `<>` (files the command writes).
    pub writes: Vec<String>,
    /// The body of a here-document fed to this command, if any.
    pub heredoc: Option<String>,
    /// Files of `<` redirections (what the command reads on stdin).
    pub reads: Vec<String>,
}

/// Why a command line could not be read (an unclosed quote or substitution): the shell would
/// refuse it too.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unreadable(pub String);

/// Every simple command in `line`, outermost first, then those inside substitutions.
pub fn parse(line: &str) -> Result<Vec<Simple>, Unreadable> {
    let mut out = Vec::new();
    Lexer::new(line).run(&mut out, 0)?;
    Ok(out)
}

/// Nesting deeper than this (`$($($(…)))`) is refused rather than followed.
const MAX_DEPTH: usize = 16;

struct Lexer {
    chars: Vec<char>,
    pos: usize,
}

/// What a word ends with.
enum Token {
    Word(String),
    /// `;`, `&`, `|`, `&&`, `||`, `(`, `)`, newline: the simple command ends.
    Separator(bool),
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

impl Lexer {
    fn new(line: &str) -> Self {
        Lexer {
            chars: line.chars().collect(),
            pos: 0,
        }
    }

    fn peek(&self, offset: usize) -> Option<char> {
        self.chars.get(self.pos + offset).copied()
    }

    fn run(&mut self, out: &mut Vec<Simple>, depth: usize) -> Result<(), Unreadable> {
        if depth > MAX_DEPTH {
            return Err(Unreadable("commands nested too deeply".into()));
        }
        let mut current = Simple::default();
        let mut nested = Vec::new();
        // Here-documents whose bodies start after the next newline: (delimiter, command index).
        let mut pending_heredocs: Vec<(String, usize, bool)> = Vec::new();
        let mut finished: Vec<Simple> = Vec::new();
        loop {
            let token = self.token(&mut nested, depth)?;
            match token {
                Token::Word(word) => {
                    if current.words.is_empty() && is_assignment(&word) {
                        current.assignments.push(word);
                    } else {
                        current.words.push(word);
                    }
                }
                Token::Redirect {
                    writes,
                    heredoc,
                    dup,
                    herestring,
                } => {
                    let raw_start = self.pos;
                    let target = match self.token(&mut nested, depth)? {
                        Token::Word(w) => w,
                        _ => return Err(Unreadable("a redirection without a target".into())),
                    };
                    // `<<EOF` expands `$(…)` in the body; `<<'EOF'` and `<<\EOF` do not.
                    let expands = !self.chars[raw_start..self.pos]
                        .iter()
                        .any(|c| matches!(c, '\'' | '"' | '\\'));
                    let descriptor = target == "-" || target.chars().all(|c| c.is_ascii_digit());
                    if heredoc {
                        pending_heredocs.push((target, finished.len(), expands));
                    } else if herestring {
                        // What a command reads on stdin: a shell runs it.
                        current.heredoc = Some(target);
                    } else if writes || (dup && !descriptor) {
                        current.writes.push(target);
                    } else if !dup {
                        current.reads.push(target);
                    }
                }
                Token::Separator(newline) => {
                    finished.push(std::mem::take(&mut current));
                    if newline {
                        for (delimiter, index, expands) in pending_heredocs.drain(..) {
                            let body = self.heredoc_body(&delimiter);
                            if expands {
                                nested.extend(substitutions_in(&body, depth)?);
                            }
                            if let Some(simple) = finished.get_mut(index) {
                                simple.heredoc = Some(body);
                            }
                        }
                    }
                }
                Token::End => {
                    finished.push(current);
                    for (delimiter, index, expands) in pending_heredocs.drain(..) {
                        let body = self.heredoc_body(&delimiter);
                        if expands {
                            nested.extend(substitutions_in(&body, depth)?);
                        }
                        if let Some(simple) = finished.get_mut(index) {
                            simple.heredoc = Some(body);
                        }
                    }
                    break;
                }
            }
        }
        out.extend(
            finished.into_iter().filter(|s| {
                !s.words.is_empty() || !s.assignments.is_empty() || !s.writes.is_empty()
            }),
        );
        out.extend(nested);
        Ok(())
    }

    /// The lines up to one that is exactly `delimiter` (quotes removed; `<<-` tabs stripped).
    fn heredoc_body(&mut self, delimiter: &str) -> String {
        let mut body = String::new();
        loop {
            if self.pos >= self.chars.len() {
                return body;
            }
            let start = self.pos;
            while self.pos < self.chars.len() && self.chars[self.pos] != '\n' {
                self.pos += 1;
            }
            let line: String = self.chars[start..self.pos].iter().collect();
            if self.pos < self.chars.len() {
                self.pos += 1;
            }
            if line.trim_start_matches('\t') == delimiter {
                return body;
            }
            body.push_str(&line);
            body.push('\n');
        }
    }

    fn token(&mut self, nested: &mut Vec<Simple>, depth: usize) -> Result<Token, Unreadable> {
        // Blanks, line continuations and comments between words.
        loop {
            match self.peek(0) {
                Some(' ' | '\t') => self.pos += 1,
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
                return Ok(Token::Separator(true));
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
                self.pos += 1;
                if matches!(
                    (c, self.peek(0)),
                    ('&', Some('&')) | ('|', Some('|')) | (';', Some(';'))
                ) {
                    self.pos += 1;
                }
                return Ok(Token::Separator(false));
            }
            // `<(…)` and `>(…)`: process substitution, a word whose commands run.
            '<' | '>' if self.peek(1) == Some('(') => {}
            '<' | '>' => return Ok(self.redirect()),
            _ => {}
        }
        // A file-descriptor number directly before a redirection: `2>`, `1>>`.
        let digits = self.chars[self.pos..]
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .count();
        if digits > 0 && matches!(self.peek(digits), Some('<' | '>')) {
            self.pos += digits;
            return Ok(self.redirect());
        }
        let mut word = String::new();
        while let Some(c) = self.peek(0) {
            match c {
                '<' | '>' if self.peek(1) == Some('(') => {
                    word.push_str(&self.substitution(nested, depth)?)
                }
                ' ' | '\t' | '\n' | ';' | '&' | '|' | '(' | ')' | '<' | '>' => break,
                '\\' => {
                    self.pos += 1;
                    match self.peek(0) {
                        Some('\n') => self.pos += 1,
                        Some(next) => {
                            word.push(next);
                            self.pos += 1;
                        }
                        None => {}
                    }
                }
                '\'' => {
                    self.pos += 1;
                    loop {
                        match self.peek(0) {
                            None => return Err(Unreadable("an unclosed ' quote".into())),
                            Some('\'') => {
                                self.pos += 1;
                                break;
                            }
                            Some(q) => {
                                word.push(q);
                                self.pos += 1;
                            }
                        }
                    }
                }
                '"' => {
                    self.pos += 1;
                    loop {
                        match self.peek(0) {
                            None => return Err(Unreadable("an unclosed \" quote".into())),
                            Some('"') => {
                                self.pos += 1;
                                break;
                            }
                            Some('\\') => {
                                self.pos += 1;
                                match self.peek(0) {
                                    Some(e @ ('$' | '`' | '"' | '\\')) => {
                                        word.push(e);
                                        self.pos += 1;
                                    }
                                    Some('\n') => self.pos += 1,
                                    _ => word.push('\\'),
                                }
                            }
                            Some('$') if self.peek(1) == Some('(') => {
                                word.push_str(&self.substitution(nested, depth)?);
                            }
                            Some('`') => word.push_str(&self.backticks(nested, depth)?),
                            Some(q) => {
                                word.push(q);
                                self.pos += 1;
                            }
                        }
                    }
                }
                '$' if self.peek(1) == Some('\'') => {
                    // ANSI-C quoting: `$'…'`, with backslash escapes.
                    self.pos += 2;
                    loop {
                        match self.peek(0) {
                            None => return Err(Unreadable("an unclosed $' quote".into())),
                            Some('\'') => {
                                self.pos += 1;
                                break;
                            }
                            Some('\\') => {
                                self.pos += 1;
                                if let Some(c) = self.ansi_c_escape() {
                                    word.push(c);
                                }
                            }
                            Some(q) => {
                                word.push(q);
                                self.pos += 1;
                            }
                        }
                    }
                }
                '$' if self.peek(1) == Some('(') => {
                    word.push_str(&self.substitution(nested, depth)?)
                }
                '`' => word.push_str(&self.backticks(nested, depth)?),
                other => {
                    word.push(other);
                    self.pos += 1;
                }
            }
        }
        Ok(Token::Word(word))
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
                Token::Redirect {
                    writes: true,
                    heredoc: false,
                    dup: false,
                    herestring: false,
                }
            }
            (Some('<'), Some('&')) => {
                self.pos += 1;
                Token::Redirect {
                    writes: false,
                    heredoc: false,
                    dup: false,
                    herestring: false,
                }
            }
            (Some('<'), _) => Token::Redirect {
                writes: false,
                heredoc: false,
                dup: false,
                herestring: false,
            },
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
                Token::Redirect {
                    writes: true,
                    heredoc: false,
                    dup: false,
                    herestring: false,
                }
            }
            _ => Token::Redirect {
                writes: true,
                heredoc: false,
                dup: false,
                herestring: false,
            },
        }
    }

    /// `$(…)` (or `$((…))`, arithmetic, kept as text) at the cursor: parses its commands into
    /// `nested` and returns its text for the word it is part of.
    fn substitution(
        &mut self,
        nested: &mut Vec<Simple>,
        depth: usize,
    ) -> Result<String, Unreadable> {
        let start = self.pos;
        self.pos += 2;
        let arithmetic = self.peek(0) == Some('(');
        let inner_start = self.pos;
        let mut level = 1;
        // Here-documents opened inside: their bodies (after the next newline) are text, not
        // parentheses or quotes (`git commit -m "$(cat <<'EOF' … don't … EOF )"`).
        let mut heredocs: Vec<String> = Vec::new();
        while level > 0 {
            match self.peek(0) {
                None => return Err(Unreadable("an unclosed $( substitution".into())),
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
                        return Err(Unreadable(format!("an unclosed {q} quote")));
                    }
                }
                _ => {}
            }
            self.pos += 1;
        }
        let inner: String = self.chars[inner_start..self.pos - 1].iter().collect();
        if !arithmetic {
            Lexer::new(&inner).run(nested, depth + 1)?;
        }
        Ok(self.chars[start..self.pos].iter().collect())
    }

    fn backticks(&mut self, nested: &mut Vec<Simple>, depth: usize) -> Result<String, Unreadable> {
        let start = self.pos;
        self.pos += 1;
        let mut inner = String::new();
        loop {
            match self.peek(0) {
                None => return Err(Unreadable("an unclosed ` substitution".into())),
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
        Lexer::new(&inner).run(nested, depth + 1)?;
        Ok(self.chars[start..self.pos].iter().collect())
    }
}

/// The commands of the `$(…)` and backticks in `text`, read as the shell reads the body of
/// a here-document with an unquoted delimiter (as inside double quotes).
fn substitutions_in(text: &str, depth: usize) -> Result<Vec<Simple>, Unreadable> {
    if !text.contains("$(") && !text.contains('`') {
        return Ok(Vec::new());
    }
    // A backslash means there what it means inside double quotes; a `"` is only a character.
    let quoted = format!("\"{}\"", text.replace('"', "\\\""));
    let mut out = Vec::new();
    Lexer::new(&quoted).run(&mut out, depth + 1)?;
    // The first is the body itself, as one word.
    Ok(out.into_iter().skip(1).collect())
}

/// `NAME=value` (or bash's `NAME+=value`), as the shell takes it before the program name.
pub fn is_assignment(word: &str) -> bool {
    match word.split_once('=') {
        Some((name, _)) => {
            let name = name.strip_suffix('+').unwrap_or(name);
            !name.is_empty()
                && !name.starts_with(|c: char| c.is_ascii_digit())
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        }
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn words(line: &str) -> Vec<Vec<String>> {
        parse(line)
            .unwrap()
            .into_iter()
            .map(|s| s.assignments.into_iter().chain(s.words).collect())
            .collect()
    }

    fn w(list: &[&[&str]]) -> Vec<Vec<String>> {
        list.iter()
            .map(|l| l.iter().map(|s| s.to_string()).collect())
            .collect()
    }

    #[test]
    fn separators_split_simple_commands() {
        assert_eq!(
            words("a 1 && b 2 || c; d | e & f\ng"),
            w(&[
                &["a", "1"],
                &["b", "2"],
                &["c"],
                &["d"],
                &["e"],
                &["f"],
                &["g"]
            ])
        );
        assert_eq!(
            words("(cd x; git commit -n)"),
            w(&[&["cd", "x"], &["git", "commit", "-n"]])
        );
    }

    #[test]
    fn quotes_are_removed_and_keep_operators_inside() {
        assert_eq!(
            words(r#"echo 'a && b' "c; d" e\ f $'g\nh'"#),
            w(&[&["echo", "a && b", "c; d", "e f", "g\nh"]])
        );
        assert_eq!(words("git com\"mit\" -n"), w(&[&["git", "commit", "-n"]]));
    }

    #[test]
    fn substitutions_are_commands_too() {
        assert_eq!(
            words("echo $(git update-ref refs/orchestrator/x HEAD) `rm -f y`"),
            w(&[
                &[
                    "echo",
                    "$(git update-ref refs/orchestrator/x HEAD)",
                    "`rm -f y`"
                ],
                &["git", "update-ref", "refs/orchestrator/x", "HEAD"],
                &["rm", "-f", "y"]
            ])
        );
        assert_eq!(
            words("x=\"$(a \"b c\")\"; echo $((1+2))"),
            w(&[&["x=$(a \"b c\")"], &["echo", "$((1+2))"], &["a", "b c"]])
        );
    }

    #[test]
    fn redirections_are_kept_apart() {
        let parsed = parse("echo hi > .git/hooks/pre-commit 2>&1 >>log; cat <in").unwrap();
        assert_eq!(parsed[0].words, ["echo", "hi"]);
        assert_eq!(parsed[0].writes, [".git/hooks/pre-commit", "log"]);
        assert_eq!(parsed[1].words, ["cat"]);
        assert!(parsed[1].writes.is_empty());
        assert_eq!(parse("a &>out").unwrap()[0].writes, ["out"]);
    }

    #[test]
    fn here_documents_are_bodies_not_commands() {
        let parsed = parse("sh <<'EOF'\ngit commit -n\nEOF\necho done").unwrap();
        assert_eq!(parsed.len(), 2);
        assert_eq!(parsed[0].words, ["sh"]);
        assert_eq!(parsed[0].heredoc.as_deref(), Some("git commit -n\n"));
        assert_eq!(parsed[1].words, ["echo", "done"]);
    }

    #[test]
    fn ansi_c_quotes_are_decoded_as_bash_decodes_them() {
        assert_eq!(
            words(r"git commit $'\x2dn' $'\055n' $'\u002dn' $'a\'b'"),
            w(&[&["git", "commit", "-n", "-n", "-n", "a'b"]])
        );
    }

    #[test]
    fn process_substitutions_and_here_strings_are_read() {
        assert_eq!(
            words("diff <(sort a) >(tee b)"),
            w(&[
                &["diff", "<(sort a)", ">(tee b)"],
                &["sort", "a"],
                &["tee", "b"]
            ])
        );
        let parsed = parse("bash <<< 'git commit -n'").unwrap();
        assert_eq!(parsed[0].heredoc.as_deref(), Some("git commit -n"));
    }

    #[test]
    fn an_unquoted_here_document_runs_its_substitutions() {
        assert_eq!(
            words("cat <<EOF\nx \"$(git commit -n)\" `rm y` \\$(not run)\nEOF"),
            w(&[&["cat"], &["git", "commit", "-n"], &["rm", "y"]])
        );
        assert_eq!(words("cat <<'EOF'\n$(git commit -n)\nEOF"), w(&[&["cat"]]));
    }

    #[test]
    fn a_here_document_inside_a_substitution_is_its_text() {
        let line = "git commit -m \"$(cat <<'EOF'\nfix: don't crash (\"really\")\nEOF\n)\"";
        let parsed = parse(line).unwrap();
        assert_eq!(parsed[0].words[..2], ["git", "commit"]);
        assert_eq!(parsed[1].words, ["cat"]);
        assert_eq!(
            parsed[1].heredoc.as_deref(),
            Some("fix: don't crash (\"really\")\n")
        );
        // A `)` in the body does not end the substitution early.
        let hidden = "x=\"$(cat <<'EOF'\n)\nEOF\ngit commit -n -m x\n)\"";
        let words: Vec<Vec<String>> = parse(hidden)
            .unwrap()
            .into_iter()
            .map(|s| s.words)
            .collect();
        assert!(
            words.contains(&vec![
                "git".into(),
                "commit".into(),
                "-n".into(),
                "-m".into(),
                "x".into()
            ]),
            "{words:?}"
        );
    }

    #[test]
    fn a_duplication_to_a_file_writes_it() {
        assert_eq!(parse("echo x >& f 2>&1 >&-").unwrap()[0].writes, ["f"]);
    }

    #[test]
    fn assignments_come_before_the_program() {
        let parsed = parse("GIT_ORCHESTRATE_HUMAN=1 A=b git x=y").unwrap();
        assert_eq!(parsed[0].assignments, ["GIT_ORCHESTRATE_HUMAN=1", "A=b"]);
        assert_eq!(parsed[0].words, ["git", "x=y"]);
    }

    #[test]
    fn unclosed_quotes_are_unreadable() {
        assert!(parse("echo 'x").is_err());
        assert!(parse("echo $(x").is_err());
        assert!(parse("echo `x").is_err());
        let deep = "$(".repeat(40) + &")".repeat(40);
        assert!(parse(&deep).is_err());
    }
}
