//! Which files of the repository a command reaches when a shell runs it: every program,
//! script and sourced file its commands name (through `cd`, wrappers such as `env` or
//! `timeout`, `sh -c`, a script a shell reads on its standard input, and variables set once
//! to a known value in the same text; not inside a command substitution, whose output a
//! test checks), a makefile's recipes under `make`, the `package.json` scripts `npm`, `yarn`
//! or `pnpm` runs, and, transitively, what each shell script among those names the same
//! way. Pure: the scripts' text comes from the caller (src/engine/proof/adequacy.rs reads it
//! from a tree), and what is reached is the RED command's witness, test code for adequacy
//! (docs/integrity.md).

use super::command_files::is_assignment;
use vars::Vars;
use words::{Part, Sep, Simple, Word, is_name};

mod vars;
mod words;

/// How deep a chain of scripts is followed (`run_tests.sh` → `check_mul.sh` is one step).
const MAX_DEPTH: usize = 4;
/// A script longer than this is not read: a test driver is short, and reading is bounded.
pub const MAX_SCRIPT: u64 = 64 * 1024;
/// At most this many files are reached from one command.
const MAX_FILES: usize = 64;
/// At most this many make targets are followed.
const MAX_TARGETS: usize = 64;
/// At most this many directories up from where a package manager runs is a `package.json`
/// looked for, and at most this many package manager runs are followed from one command.
const MAX_UP: usize = 32;
const MAX_PACKAGE_RUNS: usize = 64;

/// Shells' own commands: nothing on disk to find.
const BUILTINS: [&str; 36] = [
    ":", "[", "[[", "alias", "bg", "break", "continue", "echo", "eval", "exit", "export", "false",
    "fg", "getopts", "hash", "jobs", "kill", "local", "printf", "pwd", "read", "readonly",
    "return", "set", "shift", "test", "trap", "true", "type", "ulimit", "umask", "unset", "wait",
    "declare", "let", "shopt",
];

/// Reserved words that may stand before a command on its line (`if sh check.sh; then`).
const BEFORE_COMMAND: [&str; 11] = [
    "if", "then", "else", "elif", "do", "while", "until", "!", "{", "}", "done",
];

/// Words that open a compound command whose words name no program (`for x in a b`).
const NAMES_NOTHING: [&str; 6] = ["for", "case", "select", "function", "fi", "esac"];

/// Shells: their first operand is a script, or with `-c` a command line.
const SHELLS: [&str; 6] = ["sh", "bash", "dash", "zsh", "ksh", "ash"];

/// Other interpreters whose first operand is a script file.
const INTERPRETERS: [&str; 6] = ["python", "python3", "node", "ruby", "perl", "php"];

/// Commands that run the command after their own options (`timeout 5 ./check.sh`).
const WRAPPERS: [&str; 9] = [
    "env", "timeout", "nice", "nohup", "command", "exec", "time", "xargs", "stdbuf",
];

/// How a file is run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum How {
    /// Run as a program: read as shell when its text is a shell script.
    Program,
    /// Read by a shell: `sh check.sh`, `. ./lib.sh`.
    Shell,
    /// Read by another interpreter (`python3 check.py`): not followed.
    Script,
    /// The makefile `make` reads, and the targets it was asked for (none: the first).
    Make(Vec<String>),
    /// The `scripts` of the `package.json` in this directory (or, with `up`, the nearest one
    /// above it) that a package manager runs, in order (`pretest`, `test`, `posttest`): each
    /// read as shell, run from that file's directory. The `package.json` itself is not
    /// reached: it is read, as a makefile's rules are, but it is configuration, judged as
    /// such; the scripts read are ([`Reach::scripts`]), put in as the squash has them
    /// (src/workflow/package_scripts.rs).
    Scripts { names: Vec<String>, up: bool },
}

/// A file a shell text names: its path from the repository root, how it runs, and the
/// directory (from the root) the shell is in when it does, `None` where that is not known.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Named {
    pub path: String,
    pub how: How,
    pub cwd: Option<String>,
}

/// A script of a `package.json` that a package manager run reaches: the file's path from
/// the root and the script's name (`pretest`, `test`, `posttest` for `npm test`), whether or
/// not the file holds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PackageScript {
    pub package: String,
    pub name: String,
}

/// What a command reaches: the files ([`files_run`]) and the `package.json` scripts its
/// package manager runs read as shell, in the order found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Reach {
    pub files: Vec<String>,
    pub scripts: Vec<PackageScript>,
}

/// The files of the repository `command` (run at the root) reaches: those it names, then
/// those each shell script or makefile among them names, read through `read` (a file's
/// text, `None` where it is not a readable file), to a bounded depth. In the order found.
pub fn files_run<E>(
    command: &str,
    read: impl FnMut(&str) -> Result<Option<String>, E>,
) -> Result<Vec<String>, E> {
    Ok(reach(command, read)?.files)
}

/// [`files_run`], with the `package.json` scripts read on the way.
pub fn reach<E>(
    command: &str,
    mut read: impl FnMut(&str) -> Result<Option<String>, E>,
) -> Result<Reach, E> {
    let mut out: Vec<String> = Vec::new();
    let mut scripts: Vec<PackageScript> = Vec::new();
    let mut queue: Vec<(Named, usize)> = names(command, Some(""), None)
        .into_iter()
        .map(|n| (n, 0))
        .collect();
    let mut at = 0;
    // The package scripts already read: (the `package.json`'s directory, the script's name).
    let mut scripts_read: Vec<(String, String)> = Vec::new();
    let mut packages_asked = 0;
    while let Some((named, depth)) = queue.get(at).cloned() {
        at += 1;
        if out.len() >= MAX_FILES {
            break;
        }
        if let How::Scripts { names: wanted, up } = &named.how {
            packages_asked += 1;
            if depth >= MAX_DEPTH || packages_asked > MAX_PACKAGE_RUNS {
                continue;
            }
            let Some((dir, package)) = package_json(&named.path, *up, &mut read)? else {
                continue;
            };
            for name in wanted {
                let key = (dir.clone(), name.clone());
                if scripts_read.contains(&key) {
                    continue;
                }
                scripts_read.push(key);
                scripts.push(PackageScript {
                    package: match dir.as_str() {
                        "" => "package.json".to_string(),
                        at => format!("{at}/package.json"),
                    },
                    name: name.clone(),
                });
                if let Some(line) = package_script(&package, name) {
                    let more = names(&line, Some(&dir), None);
                    queue.extend(more.into_iter().map(|n| (n, depth + 1)));
                }
            }
            continue;
        }
        let (path, text) = match &named.how {
            How::Make(_) if named.path.ends_with('/') || named.path.is_empty() => {
                // No `-f`: GNU make reads the first of these there is.
                let mut found = None;
                for name in ["GNUmakefile", "makefile", "Makefile"] {
                    let path = format!("{}{name}", named.path);
                    if let Some(text) = read(&path)? {
                        found = Some((path, Some(text)));
                        break;
                    }
                }
                match found {
                    Some(found) => found,
                    None => continue,
                }
            }
            _ => (named.path.clone(), None),
        };
        if out.contains(&path) {
            continue;
        }
        out.push(path.clone());
        if depth >= MAX_DEPTH {
            continue;
        }
        let text = match text {
            Some(text) => Some(text),
            None if named.how == How::Script => None,
            None => read(&path)?,
        };
        let Some(text) = text.filter(|t| t.len() as u64 <= MAX_SCRIPT) else {
            continue;
        };
        let more = match &named.how {
            How::Shell => names(&text, named.cwd.as_deref(), Some(&path)),
            How::Program if is_shell_text(&text) => names(&text, named.cwd.as_deref(), Some(&path)),
            How::Make(targets) => recipes(&text, targets)
                .iter()
                .flat_map(|line| names(line, named.cwd.as_deref(), None))
                .collect(),
            _ => Vec::new(),
        };
        queue.extend(more.into_iter().map(|n| (n, depth + 1)));
    }
    Ok(Reach {
        files: out,
        scripts,
    })
}

/// The directory (from the root) and text of the `package.json` a package manager run in
/// `dir` reads: there, or with `up` the nearest above it within the repository, as npm, yarn
/// and pnpm look for it.
fn package_json<E>(
    dir: &str,
    up: bool,
    read: &mut impl FnMut(&str) -> Result<Option<String>, E>,
) -> Result<Option<(String, String)>, E> {
    let mut dir = Some(dir.to_string());
    for _ in 0..MAX_UP {
        let Some(at) = dir else {
            break;
        };
        let path = match at.as_str() {
            "" => "package.json".to_string(),
            at => format!("{at}/package.json"),
        };
        if let Some(text) = read(&path)?.filter(|t| t.len() as u64 <= MAX_SCRIPT) {
            return Ok(Some((at, text)));
        }
        if !up || at.is_empty() {
            break;
        }
        dir = Some(
            at.rsplit_once('/')
                .map_or("", |(parent, _)| parent)
                .to_string(),
        );
    }
    Ok(None)
}

/// The command line of script `name` in the text of a `package.json`: `None` where the text
/// is not JSON or has no such script.
fn package_script(package: &str, name: &str) -> Option<String> {
    let value: serde_json::Value = serde_json::from_str(package).ok()?;
    value
        .get("scripts")?
        .get(name)?
        .as_str()
        .map(str::to_string)
}

/// A program's text is a shell script when its `#!` line names a shell, or it has none
/// (the shell runs such a file itself).
fn is_shell_text(text: &str) -> bool {
    let Some(line) = text.lines().next() else {
        return true;
    };
    let Some(interpreter) = line.strip_prefix("#!") else {
        return !text.contains('\0');
    };
    let mut words = interpreter.split_whitespace();
    let mut program = words.next().map(basename);
    if program == Some("env") {
        program = words.find(|w| !w.starts_with('-')).map(basename);
    }
    program.is_some_and(|p| SHELLS.contains(&p))
}

fn basename(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Token {
    Word(Word),
    /// `;`, `&`, `|`, `&&`, `||`, a newline: a simple command ends.
    End(Sep),
    /// `(`: a subshell opens (its `cd` stays in it).
    Open,
    /// `)`: a subshell closes (or a `case` pattern ends).
    Close,
    /// A redirection: the next word is its target, not an argument; `true` where that target
    /// is read as standard input (`<`, `0<`).
    Redirect(bool),
}

/// A word being read.
#[derive(Default)]
struct Building {
    word: Word,
    started: bool,
    /// Something in it is expanded that is never known here (a glob, `$(…)`, `$1`).
    unknown: bool,
    /// It expands a plain variable, which may be known.
    variable: bool,
}

impl Building {
    fn new() -> Self {
        Building {
            word: Word {
                value: Some(String::new()),
                parts: Some(Vec::new()),
                ..Word::default()
            },
            ..Building::default()
        }
    }

    fn push(&mut self, c: char) {
        self.started = true;
        self.word.raw.push(c);
        if let Some(v) = self.word.value.as_mut() {
            v.push(c);
        }
        if let Some(parts) = self.word.parts.as_mut() {
            match parts.last_mut() {
                Some(Part::Text(text)) => text.push(c),
                _ => parts.push(Part::Text(c.to_string())),
            }
        }
    }

    fn raw(&mut self, text: &[char]) {
        self.started = true;
        self.word.raw.extend(text);
    }

    fn take(&mut self) -> Option<Word> {
        let mut word = std::mem::replace(self, Building::new());
        if word.unknown {
            word.word.value = None;
            word.word.parts = None;
        } else if word.variable {
            word.word.value = None;
        }
        word.started.then_some(word.word)
    }
}

/// The tokens of a shell text, as far as they can be read without running it: here-documents'
/// bodies and comments are skipped.
fn tokens(text: &str) -> Vec<Token> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut word = Building::new();
    // Here-documents opened on this line: their delimiter, and whether tabs are stripped.
    let mut heredocs: Vec<(String, bool)> = Vec::new();
    let mut delimiter_next: Option<bool> = None;
    let flush = |word: &mut Building,
                 out: &mut Vec<Token>,
                 delimiter: &mut Option<bool>,
                 heredocs: &mut Vec<(String, bool)>| {
        if let Some(w) = word.take() {
            if let Some(strip) = delimiter.take() {
                let d: String = w
                    .raw
                    .chars()
                    .filter(|c| !matches!(c, '\'' | '"' | '\\'))
                    .collect();
                heredocs.push((d, strip));
            }
            out.push(Token::Word(w));
        }
    };
    let mut i = 0;
    while let Some(&c) = chars.get(i) {
        let next = chars.get(i + 1).copied();
        match c {
            ' ' | '\t' => {
                flush(&mut word, &mut out, &mut delimiter_next, &mut heredocs);
                i += 1;
            }
            '\n' => {
                flush(&mut word, &mut out, &mut delimiter_next, &mut heredocs);
                out.push(Token::End(Sep::Seq));
                i += 1;
                i = skip_heredocs(&chars, i, &mut heredocs);
            }
            '#' if !word.started => {
                while chars.get(i).is_some_and(|&c| c != '\n') {
                    i += 1;
                }
            }
            '&' if next == Some('>') => {
                flush(&mut word, &mut out, &mut delimiter_next, &mut heredocs);
                out.push(Token::Redirect(false));
                i += if chars.get(i + 2) == Some(&'>') { 3 } else { 2 };
            }
            ';' | '&' | '|' => {
                flush(&mut word, &mut out, &mut delimiter_next, &mut heredocs);
                out.push(Token::End(match (c, next) {
                    ('&', Some('&')) => Sep::And,
                    ('&', _) => Sep::Background,
                    ('|', Some('|')) => Sep::Or,
                    ('|', _) => Sep::Pipe,
                    _ => Sep::Seq,
                }));
                i += 1;
                if next == Some(c) || (c == '|' && next == Some('&')) {
                    i += 1;
                }
            }
            '(' => {
                flush(&mut word, &mut out, &mut delimiter_next, &mut heredocs);
                out.push(Token::Open);
                i += 1;
            }
            ')' => {
                flush(&mut word, &mut out, &mut delimiter_next, &mut heredocs);
                out.push(Token::Close);
                i += 1;
            }
            '<' | '>' => {
                // A file descriptor's number before the operator is part of it (`2>&1`).
                let fd = word.started
                    && word.word.raw.chars().all(|c| c.is_ascii_digit())
                    && !word.word.raw.is_empty();
                let mut stdin = c == '<';
                if fd {
                    stdin &= word.take().is_some_and(|w| w.raw == "0");
                } else {
                    flush(&mut word, &mut out, &mut delimiter_next, &mut heredocs);
                }
                let mut len = 1;
                if c == '<' && next == Some('<') {
                    if chars.get(i + 2) == Some(&'<') {
                        len = 3;
                    } else {
                        len = 2;
                        let strip = chars.get(i + 2) == Some(&'-');
                        if strip {
                            len = 3;
                        }
                        delimiter_next = Some(strip);
                    }
                } else if matches!(next, Some('>' | '&' | '|')) || (c == '<' && next == Some('>')) {
                    len = 2;
                }
                out.push(Token::Redirect(stdin && len == 1));
                i += len;
            }
            '\\' => {
                match next {
                    // A line continued.
                    Some('\n') => {}
                    Some(n) => {
                        word.raw(&['\\']);
                        word.push(n);
                    }
                    None => {}
                }
                i += 2;
            }
            '\'' => {
                let end = (i + 1..chars.len())
                    .find(|&j| chars[j] == '\'')
                    .unwrap_or(chars.len());
                word.raw(&['\'']);
                for &q in &chars[i + 1..end] {
                    word.push(q);
                }
                word.raw(&['\'']);
                i = end + 1;
            }
            '"' => {
                word.raw(&['"']);
                i += 1;
                while let Some(&q) = chars.get(i) {
                    match q {
                        '"' => {
                            word.raw(&['"']);
                            i += 1;
                            break;
                        }
                        '\\' => {
                            match chars.get(i + 1) {
                                Some(&n @ ('$' | '`' | '"' | '\\')) => {
                                    word.raw(&['\\']);
                                    word.push(n);
                                }
                                Some('\n') => {}
                                Some(&n) => {
                                    word.push('\\');
                                    word.push(n);
                                }
                                None => {}
                            }
                            i += 2;
                        }
                        '$' | '`' => i = expansion(&chars, i, &mut word, true),
                        _ => {
                            word.push(q);
                            i += 1;
                        }
                    }
                }
            }
            '$' | '`' => i = expansion(&chars, i, &mut word, false),
            '*' | '?' | '[' => {
                word.unknown = true;
                word.push(c);
                i += 1;
            }
            '~' if !word.started => {
                word.unknown = true;
                word.push(c);
                i += 1;
            }
            _ => {
                word.push(c);
                i += 1;
            }
        }
    }
    flush(&mut word, &mut out, &mut delimiter_next, &mut heredocs);
    out
}

/// Reads the expansion at `chars[at]` (`$…` or a backquote, inside double quotes where
/// `quoted`) into `word`, which it makes unknown, or, for a plain variable (`$D`, `${D}`),
/// known once that variable is; the index after it. A command substitution's own commands
/// are not read: what it runs is what the test checks the output of (`[ "$(sh calc.sh mul 4
/// 3)" = 12 ]`), the code under test, never a witness.
fn expansion(chars: &[char], at: usize, word: &mut Building, quoted: bool) -> usize {
    let end = match (chars[at], chars.get(at + 1)) {
        ('`', _) => {
            (at + 1..chars.len())
                .find(|&j| chars[j] == '`' && chars[j - 1] != '\\')
                .unwrap_or(chars.len())
                + 1
        }
        ('$', Some('(')) => balanced(chars, at + 2, '(', ')') + 1,
        ('$', Some('{')) => balanced(chars, at + 2, '{', '}') + 1,
        ('$', Some(c)) if c.is_ascii_alphanumeric() || "_@*#?$!-".contains(*c) => {
            let mut end = at + 2;
            if c.is_ascii_alphabetic() || *c == '_' {
                while chars
                    .get(end)
                    .is_some_and(|c| c.is_ascii_alphanumeric() || *c == '_')
                {
                    end += 1;
                }
            }
            end
        }
        _ => {
            // A lone `$` is itself.
            word.push('$');
            return at + 1;
        }
    };
    let end = end.min(chars.len());
    let text: String = chars[at..end].iter().collect();
    let name = text
        .strip_prefix("${")
        .and_then(|t| t.strip_suffix('}'))
        .or_else(|| text.strip_prefix('$'))
        .filter(|n| is_name(n));
    match name {
        Some(name) => {
            word.variable = true;
            if let Some(parts) = word.word.parts.as_mut() {
                parts.push(Part::Var {
                    name: name.to_string(),
                    quoted,
                });
            }
        }
        None => word.unknown = true,
    }
    word.raw(&chars[at..end]);
    end
}

/// The index of the `close` that matches an `open` already read, from `from`; quotes skipped.
fn balanced(chars: &[char], from: usize, open: char, close: char) -> usize {
    let mut depth = 1;
    let mut i = from;
    while let Some(&c) = chars.get(i) {
        match c {
            '\\' => i += 1,
            '\'' => {
                i = (i + 1..chars.len())
                    .find(|&j| chars[j] == '\'')
                    .unwrap_or(chars.len());
            }
            '"' => {
                i += 1;
                while chars.get(i).is_some_and(|&q| q != '"') {
                    if chars[i] == '\\' {
                        i += 1;
                    }
                    i += 1;
                }
            }
            c if c == open => depth += 1,
            c if c == close => {
                depth -= 1;
                if depth == 0 {
                    return i;
                }
            }
            _ => {}
        }
        i += 1;
    }
    chars.len()
}

/// Past the bodies of the here-documents opened on the line that ended before `from`.
fn skip_heredocs(chars: &[char], from: usize, heredocs: &mut Vec<(String, bool)>) -> usize {
    let mut i = from;
    for (delimiter, strip) in heredocs.drain(..) {
        while i < chars.len() {
            let end = (i..chars.len())
                .find(|&j| chars[j] == '\n')
                .unwrap_or(chars.len());
            let line: String = chars[i..end].iter().collect();
            i = end + 1;
            let line = if strip {
                line.trim_start_matches('\t')
            } else {
                &line
            };
            if line == delimiter {
                break;
            }
        }
    }
    i.min(chars.len())
}

/// The files shell text `text` names, read from directory `cwd` (from the root; `None`:
/// unknown), as script `script` (its path, for `$0`) where it is one. Not followed into the
/// files: [`files_run`] does that.
pub fn names(text: &str, cwd: Option<&str>, script: Option<&str>) -> Vec<Named> {
    let commands = simple_commands(text);
    let mut vars = Vars::of(text, &commands);
    let mut out = Vec::new();
    let mut cwd = cwd.map(str::to_string);
    let mut subshells: Vec<Option<String>> = Vec::new();
    // The file `cat FILE |` feeds the command after the pipe.
    let mut piped: Option<Word> = None;
    for simple in &commands {
        let words: Vec<Word> = simple.words.iter().map(|w| vars.expand(w)).collect();
        let fed = piped.take();
        let stdin = simple.stdin.as_ref().map(|w| vars.expand(w)).or(fed);
        command(&words, &mut cwd, script, stdin.as_ref(), &mut out);
        if simple.end == Sep::Pipe {
            piped = cat_file(&words);
        }
        vars.after(simple);
        match simple.end {
            Sep::Open => subshells.push(cwd.clone()),
            Sep::Close => {
                if let Some(outer) = subshells.pop() {
                    cwd = outer;
                }
            }
            _ => {}
        }
    }
    out
}

/// The one file `cat FILE` prints (`cat t/check.sh | sh`), where it prints one file alone.
fn cat_file(words: &[Word]) -> Option<Word> {
    match words {
        [cat, file] if cat.known() == Some("cat") && !file.known()?.starts_with('-') => {
            Some(file.clone())
        }
        _ => None,
    }
}

/// The simple commands of `text`, in order, one for each end (an empty one where two ends
/// meet), the last ended by the end of the text.
fn simple_commands(text: &str) -> Vec<Simple> {
    let mut out = Vec::new();
    let mut words = Vec::new();
    let mut stdin = None;
    // The kind of redirection whose target the next word is.
    let mut target: Option<bool> = None;
    let mut end = |words: &mut Vec<Word>, stdin: &mut Option<Word>, end: Sep| {
        out.push(Simple {
            words: std::mem::take(words),
            stdin: stdin.take(),
            end,
        });
    };
    for token in tokens(text) {
        let sep = match token {
            Token::Word(w) => {
                match target.take() {
                    Some(true) => stdin = Some(w),
                    Some(false) => {}
                    None => words.push(w),
                }
                continue;
            }
            Token::Redirect(reads) => {
                target = Some(reads);
                continue;
            }
            Token::End(sep) => sep,
            Token::Open => Sep::Open,
            Token::Close => Sep::Close,
        };
        target = None;
        end(&mut words, &mut stdin, sep);
    }
    end(&mut words, &mut stdin, Sep::Eof);
    out
}

/// What one simple command names, `cwd` moved by a `cd`; `stdin` the file its standard
/// input is read from.
fn command(
    words: &[Word],
    cwd: &mut Option<String>,
    script: Option<&str>,
    stdin: Option<&Word>,
    out: &mut Vec<Named>,
) {
    let mut rest = words;
    while let Some((first, after)) = rest.split_first() {
        // An assignment's value may be an expansion (`X=$(sh gen.sh) sh check.sh`).
        let before =
            is_assignment(&first.raw) || first.known().is_some_and(|w| BEFORE_COMMAND.contains(&w));
        if !before {
            break;
        }
        rest = after;
    }
    run(rest, cwd, script, stdin, out);
}

/// What the command `words` names: its program, the script its interpreter reads (from its
/// standard input `stdin` for a shell given no script: `sh < check.sh`, `bash -s arg <
/// check.sh`), the command a wrapper runs, the package scripts a package manager runs.
fn run(
    words: &[Word],
    cwd: &mut Option<String>,
    script: Option<&str>,
    stdin: Option<&Word>,
    out: &mut Vec<Named>,
) {
    let Some((first, args)) = words.split_first() else {
        return;
    };
    let Some(program) = first.known() else {
        // `"$(dirname "$0")/check.sh"`: a program beside the script.
        push(
            out,
            path_of(first, cwd.as_deref(), script),
            How::Program,
            cwd,
        );
        return;
    };
    match program {
        "cd" | "pushd" => {
            *cwd = cd(args, cwd.as_deref(), script);
            return;
        }
        "popd" => {
            *cwd = None;
            return;
        }
        "." | "source" => {
            if let Some(file) = args.first() {
                push(out, path_of(file, cwd.as_deref(), script), How::Shell, cwd);
            }
            return;
        }
        "make" | "gmake" => {
            make(args, cwd, out);
            return;
        }
        _ => {}
    }
    if NAMES_NOTHING.contains(&program) || BUILTINS.contains(&program) {
        return;
    }
    if WRAPPERS.contains(&program) {
        // `env -C dir` moves the command it runs only.
        let mut inner = cwd.clone();
        // `xargs` gives the commands it runs no standard input of its own (it reads it).
        let stdin = stdin.filter(|_| program != "xargs");
        if let Some(rest) = unwrap(program, args, &mut inner) {
            run(rest, &mut inner, script, stdin, out);
        }
        return;
    }
    if let Some((dir, scripts, up)) = package_run(program, args, cwd.as_deref()) {
        out.push(Named {
            path: dir,
            how: How::Scripts { names: scripts, up },
            cwd: cwd.clone(),
        });
        return;
    }
    if program.contains('/') {
        push(out, resolve(cwd.as_deref(), program), How::Program, cwd);
    }
    let base = basename(program);
    if SHELLS.contains(&base) {
        match shell_operand(args) {
            Operand::Line(line) => {
                if let Some(line) = line.known() {
                    out.extend(names(line, cwd.as_deref(), None));
                }
            }
            Operand::Script(file) => {
                push(out, path_of(file, cwd.as_deref(), script), How::Shell, cwd);
            }
            Operand::Stdin => {
                if let Some(file) = stdin {
                    push(out, path_of(file, cwd.as_deref(), script), How::Shell, cwd);
                }
            }
            Operand::None => {}
        }
    } else if (INTERPRETERS.contains(&base) || base.starts_with("python"))
        && let Some(file) = interpreter_operand(base, args)
    {
        push(out, path_of(file, cwd.as_deref(), script), How::Script, cwd);
    }
}

/// `path` (from the root; `None`: not known), run as `how` from `cwd`.
fn push(out: &mut Vec<Named>, path: Option<String>, how: How, cwd: &Option<String>) {
    if let Some(path) = path {
        out.push(Named {
            path,
            how,
            cwd: cwd.clone(),
        });
    }
}

/// What a shell runs, by its operands.
enum Operand<'w> {
    /// A command line (`-c`).
    Line(&'w Word),
    /// A script file, its first operand.
    Script(&'w Word),
    /// What its standard input holds (`-s`, or no operand).
    Stdin,
    /// Nothing known (`-c` with no command line).
    None,
}

/// What a shell given `args` runs: its first operand after its options, as a command line
/// (`-c`) or a script, or its standard input.
fn shell_operand(args: &[Word]) -> Operand<'_> {
    let mut line = false;
    let mut stdin = false;
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        let Some(a) = arg.known() else {
            break;
        };
        // A lone `-` ends the options as `--` does.
        if a == "--" || a == "-" {
            i += 1;
            break;
        }
        if let Some(long) = a.strip_prefix("--") {
            i += if matches!(long, "rcfile" | "init-file") {
                2
            } else {
                1
            };
            continue;
        }
        if a.len() > 1 && (a.starts_with('-') || a.starts_with('+')) {
            let flags = &a[1..];
            stdin |= flags.contains('s');
            line |= flags.contains('c');
            i += if flags.ends_with('o') || flags.ends_with('O') {
                2
            } else {
                1
            };
            continue;
        }
        break;
    }
    match args.get(i) {
        Some(w) if line => Operand::Line(w),
        None if line => Operand::None,
        _ if stdin => Operand::Stdin,
        Some(w) => Operand::Script(w),
        None => Operand::Stdin,
    }
}

/// yarn's own commands, which `yarn NAME` runs rather than a script of that name.
const YARN_COMMANDS: &str = "add audit autoclean bin cache check config constraints create \
    dedupe dlx exec explain generate-lock-entry global help import info init install licenses \
    link list login logout node npm outdated owner pack patch plugin policies publish rebuild \
    remove search set stage tag team unlink unplug up upgrade upgrade-interactive version \
    versions why workspace workspaces";

/// pnpm's own commands, which `pnpm NAME` runs rather than a script of that name.
const PNPM_COMMANDS: &str = "add audit bin completion config create dedupe deploy dlx doctor \
    env exec fetch help i import init install install-test it licenses link list ln ls \
    outdated pack patch prune publish rebuild recursive remove rm root server setup store un \
    uninstall unlink up update why";

/// The scripts of a `package.json` that package manager `program` given `args` runs from
/// `cwd`: the directory it looks in, the scripts' names in the order they run, and whether
/// it looks up from there for the nearest `package.json` (no directory was named, or yarn's
/// `--cwd`, which yarn classic walks up from as from its own directory; `npm --prefix` and
/// `pnpm -C` take that directory's file or none). `npm test` (`t`, `tst`), `npm start`,
/// `npm stop`, `npm run NAME` (`run-script`), `yarn NAME`, `yarn run NAME`, `pnpm NAME`,
/// `pnpm run NAME` run `preNAME`, `NAME`, `postNAME`: yarn classic always does, and pnpm
/// does unless its `enable-pre-post-scripts` is turned off (tests/cli/adequacy_yarn_pnpm.rs);
/// reading the two where a package manager skips them only takes more of the file as the
/// squash has it.
/// `None` where it runs no script or which is not known (a workspace's, an expansion, a
/// directory outside the repository).
fn package_run(
    program: &str,
    args: &[Word],
    cwd: Option<&str>,
) -> Option<(String, Vec<String>, bool)> {
    // The other names the yarn and pnpm packages install the same program under.
    let program = match program {
        "yarnpkg" => "yarn",
        "pn" => "pnpm",
        other => other,
    };
    if !matches!(program, "npm" | "yarn" | "pnpm") {
        return None;
    }
    let mut dir: Option<String> = None;
    let mut i = 0;
    let mut operands: Vec<&str> = Vec::new();
    while let Some(arg) = args.get(i) {
        i += 1;
        let a = arg.known()?;
        if a == "--" {
            break;
        }
        let named_dir = match (program, a) {
            ("npm", "--prefix" | "-C") | ("yarn", "--cwd") | ("pnpm", "-C" | "--dir") => {
                i += 1;
                Some(args.get(i - 1)?.known()?)
            }
            _ => a
                .strip_prefix("--prefix=")
                .filter(|_| program == "npm")
                .or_else(|| a.strip_prefix("--cwd=").filter(|_| program == "yarn"))
                .or_else(|| a.strip_prefix("--dir=").filter(|_| program == "pnpm")),
        };
        if let Some(d) = named_dir {
            dir = Some(resolve_dir(cwd, d)?);
            continue;
        }
        let elsewhere = a.starts_with("--workspace")
            || a.starts_with("--filter")
            || matches!(a, "-w" | "-ws" | "-r" | "--recursive" | "-F");
        if elsewhere {
            return None;
        }
        if a.starts_with('-') {
            continue;
        }
        operands.push(a);
    }
    let (first, second) = (operands.first().copied()?, operands.get(1).copied());
    let script = match (program, first) {
        (_, "run" | "run-script") | ("npm", "rum" | "urn") => second?,
        ("npm" | "pnpm", "test" | "t" | "tst") => "test",
        ("npm", "start" | "stop") => first,
        ("npm", _) => return None,
        ("yarn", name) if YARN_COMMANDS.split_whitespace().any(|c| c == name) => return None,
        ("pnpm", name) if PNPM_COMMANDS.split_whitespace().any(|c| c == name) => return None,
        (_, name) => name,
    };
    let names = vec![
        format!("pre{script}"),
        script.to_string(),
        format!("post{script}"),
    ];
    let up = dir.is_none() || program == "yarn";
    Some((dir.or_else(|| cwd.map(str::to_string))?, names, up))
}

/// The script another interpreter reads: its first operand, `None` where it runs code given
/// on the command line or a module (`-c`, `-m`, `-e`).
fn interpreter_operand<'w>(base: &str, args: &'w [Word]) -> Option<&'w Word> {
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        let Some(a) = arg.known() else {
            return Some(arg);
        };
        if a == "--" {
            return args.get(i + 1);
        }
        if a.len() < 2 || !a.starts_with('-') {
            return Some(arg);
        }
        let code = matches!(a, "-c" | "-m" | "-e" | "-E" | "-p" | "--eval" | "--print")
            || (base == "php" && a == "-r");
        if code {
            return None;
        }
        let takes = matches!(a, "-W" | "-X" | "-I" | "-r" | "--require");
        i += if takes { 2 } else { 1 };
    }
    None
}

/// The words a wrapper runs as a command, after its own options; `env -C` moves `cwd`.
fn unwrap<'w>(wrapper: &str, args: &'w [Word], cwd: &mut Option<String>) -> Option<&'w [Word]> {
    let mut i = 0;
    // `timeout`'s duration comes before its command.
    let mut duration = wrapper == "timeout";
    while let Some(arg) = args.get(i) {
        if wrapper == "env" && is_assignment(&arg.raw) {
            i += 1;
            continue;
        }
        let a = arg.known()?;
        if a == "--" {
            i += 1;
            break;
        }
        if a.len() > 1 && a.starts_with('-') {
            let takes = match wrapper {
                "env" => {
                    if matches!(a, "-S" | "--split-string") || a.starts_with("--split-string=") {
                        return None;
                    }
                    if matches!(a, "-C" | "--chdir") {
                        let dir = args.get(i + 1)?.known()?;
                        *cwd = resolve_dir(cwd.as_deref(), dir);
                    } else if let Some(dir) = a.strip_prefix("--chdir=") {
                        *cwd = resolve_dir(cwd.as_deref(), dir);
                    }
                    matches!(a, "-u" | "--unset" | "-C" | "--chdir")
                }
                "timeout" => matches!(a, "-s" | "--signal" | "-k" | "--kill-after"),
                "nice" => matches!(a, "-n" | "--adjustment"),
                "command" if matches!(a, "-v" | "-V") => return None,
                "exec" => a == "-a",
                "time" => matches!(a, "-f" | "-o" | "--format" | "--output"),
                "xargs" => matches!(
                    a,
                    "-I" | "-n"
                        | "-P"
                        | "-L"
                        | "-s"
                        | "-d"
                        | "-E"
                        | "-a"
                        | "--arg-file"
                        | "--delimiter"
                        | "--max-args"
                        | "--max-procs"
                        | "--max-lines"
                ),
                "stdbuf" => matches!(a, "-i" | "-o" | "-e"),
                _ => false,
            };
            i += if takes { 2 } else { 1 };
            continue;
        }
        if wrapper == "env" && is_assignment(a) {
            i += 1;
            continue;
        }
        if duration {
            duration = false;
            i += 1;
            continue;
        }
        break;
    }
    args.get(i..)
}

/// The directory a `cd` moves to: `None` where it is not known (no operand: the home
/// directory; `-`; an expansion other than the script's own directory; outside the root).
fn cd(args: &[Word], cwd: Option<&str>, script: Option<&str>) -> Option<String> {
    let operand = args
        .iter()
        .find(|w| w.known().is_none_or(|a| a == "-" || !a.starts_with('-')))?;
    match operand.known() {
        Some("-") => None,
        Some(dir) => resolve_dir(cwd, dir),
        None => beside_script(operand, script),
    }
}

/// The file `word` names, read from `cwd`, as a path from the root: `None` where it is
/// not known.
fn path_of(word: &Word, cwd: Option<&str>, script: Option<&str>) -> Option<String> {
    match word.known() {
        Some(path) => resolve(cwd, path),
        None => beside_script(word, script).filter(|p| !p.is_empty()),
    }
}

/// A path `word` builds from the directory of the script it is in (`"$(dirname "$0")"`,
/// `"${0%/*}/lib.sh"`), from the root: the one expansion whose value is known here.
fn beside_script(word: &Word, script: Option<&str>) -> Option<String> {
    let raw: String = word.raw.chars().filter(|c| *c != '"').collect();
    let rest = [
        "$(dirname $0)",
        "$(dirname -- $0)",
        "$(dirname ${0})",
        "`dirname $0`",
        "${0%/*}",
        "$(dirname $BASH_SOURCE)",
        "$(dirname ${BASH_SOURCE[0]})",
    ]
    .iter()
    .find_map(|p| raw.strip_prefix(p))?;
    let plain = rest.is_empty()
        || (rest.starts_with('/') && !rest.contains(['$', '`', '\'', '\\', '*', '?', '[']));
    if !plain {
        return None;
    }
    let script = script?;
    let dir = script.rsplit_once('/').map_or("", |(dir, _)| dir);
    resolve_dir(Some(dir), rest.trim_start_matches('/'))
}

/// What `make` reads: the makefile (`-f`, else the default names, left to [`files_run`] as
/// a directory ending in `/`, or empty at the root), in the directory it runs in (`-C`), and
/// the targets asked for.
fn make(args: &[Word], cwd: &Option<String>, out: &mut Vec<Named>) {
    let mut dir = cwd.clone();
    let mut file: Option<String> = None;
    let mut targets = Vec::new();
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        i += 1;
        let Some(a) = arg.known() else {
            continue;
        };
        let value = |i: &mut usize| {
            *i += 1;
            args.get(*i - 1).and_then(Word::known).map(str::to_string)
        };
        match a {
            "-C" | "--directory" => {
                let d = value(&mut i);
                dir = d.and_then(|d| resolve_dir(dir.as_deref(), &d));
            }
            "-f" | "--file" | "--makefile" => file = value(&mut i),
            "-j" | "--jobs" if args.get(i).and_then(Word::known).is_some_and(is_number) => {
                i += 1;
            }
            "-I" | "-o" | "-W" => i += 1,
            _ if a.starts_with("-C") && a.len() > 2 => dir = resolve_dir(dir.as_deref(), &a[2..]),
            _ if a.starts_with("-f") && a.len() > 2 => file = Some(a[2..].to_string()),
            _ if a.starts_with('-') || is_assignment(a) => {}
            _ => targets.push(a.to_string()),
        }
    }
    let Some(dir) = dir else {
        return;
    };
    let path = match file {
        Some(file) => match resolve(Some(&dir), &file) {
            Some(path) => path,
            None => return,
        },
        None if dir.is_empty() => String::new(),
        None => format!("{dir}/"),
    };
    out.push(Named {
        path,
        how: How::Make(targets),
        cwd: Some(dir),
    });
}

fn is_number(word: &str) -> bool {
    !word.is_empty() && word.chars().all(|c| c.is_ascii_digit())
}

/// The recipe lines (as shell, make's own `$$` read as `$`) of `targets` in makefile text
/// `makefile` (none: its first target), and of the targets they depend on, transitively.
pub fn recipes(makefile: &str, targets: &[String]) -> Vec<String> {
    struct Rule {
        targets: Vec<String>,
        prerequisites: Vec<String>,
        recipe: Vec<String>,
    }
    let mut rules: Vec<Rule> = Vec::new();
    let mut in_rule = false;
    let mut logical = String::new();
    for line in makefile.lines() {
        if let Some(continued) = line.strip_suffix('\\') {
            logical.push_str(continued);
            logical.push(' ');
            continue;
        }
        logical.push_str(line);
        let line = std::mem::take(&mut logical);
        if let Some(recipe) = line.strip_prefix('\t') {
            if in_rule && let Some(rule) = rules.last_mut() {
                rule.recipe.push(recipe.to_string());
            }
            continue;
        }
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        in_rule = false;
        let Some((head, tail)) = trimmed.split_once(':') else {
            continue;
        };
        if head.contains('=') || tail.starts_with('=') || tail.starts_with(":=") {
            continue;
        }
        let tail = tail.trim_start_matches(':');
        let (prerequisites, inline) = tail.split_once(';').unwrap_or((tail, ""));
        in_rule = true;
        rules.push(Rule {
            targets: head.split_whitespace().map(str::to_string).collect(),
            prerequisites: prerequisites
                .split_whitespace()
                .map(str::to_string)
                .collect(),
            recipe: [inline.trim()]
                .into_iter()
                .filter(|r| !r.is_empty())
                .map(str::to_string)
                .collect(),
        });
    }
    let mut wanted: Vec<String> = targets.to_vec();
    if wanted.is_empty() {
        let first = rules
            .iter()
            .flat_map(|r| &r.targets)
            .find(|t| !t.starts_with('.') && !t.contains('%'));
        wanted.extend(first.cloned());
    }
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(target) = wanted.get(at).cloned() {
        at += 1;
        if at > MAX_TARGETS {
            break;
        }
        for rule in rules.iter().filter(|r| r.targets.contains(&target)) {
            for line in &rule.recipe {
                let line = line.trim_start_matches(['@', '-', '+', ' ', '\t']);
                out.push(line.replace("$$", "$"));
            }
            for p in &rule.prerequisites {
                if !wanted.contains(p) {
                    wanted.push(p.clone());
                }
            }
        }
    }
    out
}

/// `path` as a path from the root, read from directory `cwd`: `None` where `cwd` is not
/// known, or `path` is absolute, in the home directory, or leads outside the root.
fn resolve(cwd: Option<&str>, path: &str) -> Option<String> {
    let joined = resolve_dir(cwd, path)?;
    (!joined.is_empty()).then_some(joined)
}

/// [`resolve`], where the root itself is `""`.
fn resolve_dir(cwd: Option<&str>, path: &str) -> Option<String> {
    let cwd = cwd?;
    if path.starts_with('/') || path.starts_with('~') {
        return None;
    }
    super::repo_path::within(cwd, path)
}

#[cfg(test)]
mod tests;
