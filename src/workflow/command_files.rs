//! What a configured command runs from the repository, read off its words without a shell:
//! the program it names and the script an interpreter reads. Pure: `doctor` checks they are
//! there (src/engine/doctor/commands.rs), and the judges of a tree are protected by them
//! (src/engine/verify.rs).

/// A file a command runs: its program, or a script an interpreter reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Needed {
    /// Run by the shell: a path (relative to the repository root) when it has a `/`,
    /// else looked up on PATH.
    Program(String),
    /// Read by an interpreter: a path relative to the repository root (a shell or `.`
    /// also looks on PATH for a bare name).
    Script(String),
}

/// Shells' own commands: nothing on disk to find.
const SHELL_BUILTINS: [&str; 44] = [
    ":", "[", "alias", "bg", "break", "case", "cd", "continue", "do", "done", "echo", "elif",
    "else", "esac", "eval", "exit", "export", "false", "fg", "fi", "for", "getopts", "hash", "if",
    "jobs", "kill", "printf", "pwd", "read", "readonly", "return", "set", "shift", "test", "then",
    "times", "trap", "true", "type", "ulimit", "umask", "unset", "until", "while",
];

/// Interpreters whose first argument, when not an option, is a script file.
const INTERPRETERS: [&str; 12] = [
    "sh", "bash", "dash", "zsh", "ksh", "ash", "python", "python3", "node", "ruby", "perl", "php",
];

/// The files in the repository that `command` runs: a program named by a relative path, or
/// the script an interpreter reads. What the review command runs is protected
/// (docs/integrity.md).
pub fn repository_files(command: &str) -> Vec<String> {
    files_named(command)
        .into_iter()
        .filter_map(|needed| match needed {
            Needed::Program(p) if p.contains('/') => Some(p),
            Needed::Script(s) => Some(s),
            Needed::Program(_) => None,
        })
        .filter(|p| !p.starts_with('/') && !p.starts_with('~') && !p.contains('$'))
        .map(|p| p.trim_start_matches("./").to_string())
        .collect()
}

/// The files the first simple command of `command` needs, as far as they can be read off it
/// without running a shell: words with expansions, and anything after an option, are not
/// guessed at.
pub fn files_named(command: &str) -> Vec<Needed> {
    let words = first_simple_command(command);
    let mut words = words
        .iter()
        .map(Option::as_deref)
        .skip_while(|w| w.is_some_and(is_assignment))
        .peekable();
    let mut needed = Vec::new();
    // `exec` and `command` run the next word; `env` does too, after its settings.
    while let Some(Some("exec" | "command" | "env")) = words.peek() {
        let wrapper = words.next().flatten();
        if wrapper == Some("env") {
            needed.push(Needed::Program("env".to_string()));
            while words.peek().is_some_and(|w| w.is_some_and(is_assignment)) {
                words.next();
            }
        }
        if words
            .peek()
            .is_some_and(|w| w.is_some_and(|w| w.starts_with('-')))
        {
            return needed;
        }
    }
    let Some(Some(program)) = words.next() else {
        return needed;
    };
    if program == "." || program == "source" {
        if let Some(Some(script)) = words.next() {
            needed.push(Needed::Script(script.to_string()));
        }
        return needed;
    }
    if SHELL_BUILTINS.contains(&program) {
        return needed;
    }
    needed.push(Needed::Program(program.to_string()));
    let base = program.rsplit('/').next().unwrap_or(program);
    if INTERPRETERS.contains(&base)
        && let Some(Some(script)) = words.next()
        && !script.starts_with('-')
    {
        needed.push(Needed::Script(script.to_string()));
    }
    needed
}

/// A shell variable assignment, `NAME=value`.
pub(crate) fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty()
            && !name.starts_with(|c: char| c.is_ascii_digit())
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

/// The words of `command` up to its first operator (`;`, `&`, `|`, a redirection, a
/// parenthesis, a newline) or comment, with quotes removed; `None` for a word the shell
/// would expand (`$`, a backquote, a glob, a leading `~`), which cannot be known here.
fn first_simple_command(command: &str) -> Vec<Option<String>> {
    let mut words = Vec::new();
    let mut word = String::new();
    let (mut started, mut unknown) = (false, false);
    let mut chars = command.chars();
    let mut finish = |word: &mut String, started: &mut bool, unknown: &mut bool| {
        if *started {
            words.push((!*unknown).then(|| std::mem::take(word)));
        }
        word.clear();
        (*started, *unknown) = (false, false);
    };
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' => finish(&mut word, &mut started, &mut unknown),
            ';' | '&' | '|' | '<' | '>' | '(' | ')' | '\n' => break,
            '#' if !started => break,
            '\\' => {
                started = true;
                match chars.next() {
                    Some(next) => word.push(next),
                    None => break,
                }
            }
            '\'' => {
                started = true;
                for q in chars.by_ref() {
                    if q == '\'' {
                        break;
                    }
                    word.push(q);
                }
            }
            '"' => {
                started = true;
                while let Some(q) = chars.next() {
                    match q {
                        '"' => break,
                        '$' | '`' => unknown = true,
                        // Inside double quotes a backslash escapes only these.
                        '\\' => match chars.next() {
                            Some(next @ ('$' | '`' | '"' | '\\' | '\n')) => word.push(next),
                            Some(next) => {
                                word.push('\\');
                                word.push(next);
                            }
                            None => {}
                        },
                        _ => word.push(q),
                    }
                }
            }
            '$' | '`' | '*' | '?' | '[' => {
                started = true;
                unknown = true;
            }
            '~' if !started => {
                started = true;
                unknown = true;
            }
            _ => {
                started = true;
                word.push(c);
            }
        }
    }
    finish(&mut word, &mut started, &mut unknown);
    words
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn program(name: &str) -> Needed {
        Needed::Program(name.to_string())
    }

    fn script(name: &str) -> Needed {
        Needed::Script(name.to_string())
    }

    #[test]
    fn a_review_command_names_its_program_and_script() {
        let cases: [(&str, Vec<Needed>); 16] = [
            ("./tools/review.sh", vec![program("./tools/review.sh")]),
            ("reviewer --strict", vec![program("reviewer")]),
            (
                "sh tools/review.sh",
                vec![program("sh"), script("tools/review.sh")],
            ),
            (
                "python3 'tools/my review.py' --dimension x",
                vec![program("python3"), script("tools/my review.py")],
            ),
            (
                "/usr/bin/python3 -m reviewer",
                vec![program("/usr/bin/python3")],
            ),
            ("sh -c 'anything at all'", vec![program("sh")]),
            ("MODEL=fast exec ./review", vec![program("./review")]),
            ("env -i PATH=/bin node review.js", vec![program("env")]),
            (
                "env MODEL=x node review.js",
                vec![program("env"), program("node"), script("review.js")],
            ),
            (". ./review.sh", vec![script("./review.sh")]),
            (
                "tools/review.sh | tee review.log",
                vec![program("tools/review.sh")],
            ),
            ("cd tools && ./review.sh", vec![]),
            ("$REVIEWER", vec![]),
            ("\"$HOME/bin/review\" --x", vec![]),
            ("sh ~/review.sh", vec![program("sh")]),
            ("# nothing", vec![]),
        ];
        for (command, expected) in cases {
            assert_eq!(files_named(command), expected, "{command}");
        }
    }
}
