//! The commands an interpreter's literal program text runs (`python3 -c`, `perl -e`,
//! `ruby -e`, `node -e`, an awk program): a string handed to a call that runs a command
//! (`os.system("git …")`, `execSync("…")`, awk's `system("…")`), an argument list
//! (`subprocess.run(["git", "commit", …])`, perl's `system("git", "push", …)`), and, where
//! the language runs them, backticks. Only literals are read: a command the code builds at
//! run time is not seen (the guard is best-effort, docs/agent-guide.md).

/// The calls, by the last name before their parenthesis, that run the command their string
/// or argument list names, across Python, Perl, Ruby, Node and awk.
#[rustfmt::skip]
const RUNS: &[&str] = &[
    "system", "popen", "exec", "execSync", "execFile", "execFileSync", "spawn", "spawnSync",
    "run", "call", "check_call", "check_output", "Popen", "getoutput", "getstatusoutput",
    "capture2", "capture2e", "capture3", "popen2", "popen3", "pipeline", "execv", "execve",
    "execvp", "execvpe", "execl", "execle", "execlp", "execlpe", "spawnv", "spawnve",
    "spawnvp", "spawnvpe", "spawnl", "spawnlp", "execa", "execaSync", "qx", "readpipe",
];

/// Programs whose argument list is read wherever it stands as a list literal
/// (`["git", "commit", …]`): nothing else starts a list with them.
const LIST_PROGRAMS: &[&str] = &["git", "sh", "bash", "dash", "zsh"];

/// One quoted literal of the code: its span and its text with escapes read.
struct Literal {
    start: usize,
    end: usize,
    text: String,
    backtick: bool,
}

/// The command lines `code` runs, as shell lines: a string as it is, an argument list with
/// each word quoted. `backticks_run`: the language runs a backtick string (Perl, Ruby).
pub fn commands(code: &str, backticks_run: bool) -> Vec<String> {
    let literals = literals(code);
    let mut lines = Vec::new();
    let mut at = 0;
    while at < literals.len() {
        let first = &literals[at];
        if first.backtick && backticks_run {
            lines.push(first.text.clone());
            at += 1;
            continue;
        }
        // The literals that follow as one list: `"git", "commit"`, `'git', ['commit']`.
        let mut last = at;
        while let Some(next) = literals.get(last + 1) {
            let between = &code[literals[last].end..next.start];
            if !between
                .chars()
                .all(|c| c.is_whitespace() || matches!(c, ',' | '[' | '('))
            {
                break;
            }
            last += 1;
        }
        let before = code[..first.start].trim_end();
        let run_by_call = RUNS.contains(&called(before));
        let words: Vec<&str> = literals[at..=last]
            .iter()
            .map(|l| l.text.as_str())
            .collect();
        let program = words[0].rsplit('/').next().unwrap_or_default();
        if run_by_call && words.len() == 1 {
            lines.push(words[0].to_string());
        } else if run_by_call || (before.ends_with('[') && LIST_PROGRAMS.contains(&program)) {
            lines.push(
                words
                    .iter()
                    .map(|w| format!("'{}'", w.replace('\'', r"'\''")))
                    .collect::<Vec<_>>()
                    .join(" "),
            );
        }
        at = last + 1;
    }
    lines
}

/// The name of the call whose arguments start after `before` (`subprocess.run([`,
/// `system `), or "".
fn called(before: &str) -> &str {
    let name = before.trim_end_matches(|c: char| c.is_whitespace() || matches!(c, '(' | '['));
    let start = name
        .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .map_or(0, |i| i + 1);
    &name[start..]
}

/// The code's quoted literals, in order: `'…'`, `"…"`, `` `…` `` and Python's triple quotes,
/// with backslash escapes read. An unclosed quote ends the reading.
fn literals(code: &str) -> Vec<Literal> {
    let mut found = Vec::new();
    let mut at = 0;
    while let Some(offset) = code[at..].find(['\'', '"', '`']) {
        let start = at + offset;
        let quote = &code[start..start + 1];
        let triple = quote != "`" && code[start..].starts_with(&quote.repeat(3));
        let close = if triple {
            quote.repeat(3)
        } else {
            quote.into()
        };
        let mut text = String::new();
        let mut chars = code[start + close.len()..].char_indices();
        let mut end = None;
        while let Some((i, c)) = chars.next() {
            let here = start + close.len() + i;
            if code[here..].starts_with(close.as_str()) {
                end = Some(here + close.len());
                break;
            }
            if c == '\\' {
                match chars.next() {
                    Some((_, 'n')) => text.push('\n'),
                    Some((_, 't')) => text.push('\t'),
                    Some((_, other)) => text.push(other),
                    None => break,
                }
            } else {
                text.push(c);
            }
        }
        let Some(end) = end else {
            break;
        };
        found.push(Literal {
            start,
            end,
            text,
            backtick: quote == "`",
        });
        at = end;
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn calls_lists_and_backticks_name_their_commands() {
        assert_eq!(
            commands(
                "import subprocess; subprocess.run(['git','commit','-n','-m','x'])",
                false
            ),
            ["'git' 'commit' '-n' '-m' 'x'"]
        );
        assert_eq!(
            commands(r#"system("git","push","origin","HEAD:main")"#, true),
            ["'git' 'push' 'origin' 'HEAD:main'"]
        );
        assert_eq!(
            commands(r#"BEGIN{system("git commit -n -m x")}"#, false),
            ["git commit -n -m x"]
        );
        assert_eq!(
            commands(
                r#"require("child_process").execSync("git commit -n -m \"x\"")"#,
                false
            ),
            ["git commit -n -m \"x\""]
        );
        assert_eq!(
            commands(
                "spawnSync('git', ['commit', '-n'], {stdio: 'inherit'})",
                false
            ),
            ["'git' 'commit' '-n'"]
        );
        assert_eq!(
            commands("print `git commit -n -m x`", true),
            ["git commit -n -m x"]
        );
        assert_eq!(
            commands(
                "import os; os.system('''git push origin HEAD:main''')",
                false
            ),
            ["git push origin HEAD:main"]
        );
    }

    #[test]
    fn strings_that_run_nothing_are_not_commands() {
        for code in [
            "print('git commit -n is refused')",
            "console.log(`git ${x}`)",
            "print(\"git\", \"status\")",
            "x = {'git': 'commit'}",
            "print('unclosed",
        ] {
            assert_eq!(commands(code, false), Vec::<String>::new(), "{code}");
        }
    }
}
