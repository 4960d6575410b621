//! What programs other than git do with their arguments: the wrappers that run another
//! command, the shells and interpreters that run text, the programs that write the files
//! they name, the gates' own commands, and the orchestrator's human-only commands.

use std::path::Path;

use super::GuardContext;
use super::policy::{HUMAN_COMMANDS, Reason, Rule, Unknown};
use super::protected::normalize;
use super::words::Arg;
use crate::product::{ROLE_ENV, Role};
use crate::shell;

/// Programs that only read the files they are given.
#[rustfmt::skip]
pub const READERS: &[&str] = &[
    "cat", "less", "more", "head", "tail", "ls", "stat", "file", "wc", "grep", "egrep", "fgrep",
    "rg", "ag", "diff", "cmp", "test", "[", "[[", "echo", "printf", "realpath", "readlink",
    "sha1sum", "sha256sum", "sha512sum", "md5sum", "b2sum", "cksum", "xxd", "od", "hexdump",
    "tree", "du", "df", "bat", "nl", "cut", "jq", "yq", "shellcheck", "tac", "strings",
    "column", "comm", "paste", "fold", "sort", "uniq", "tr", "basename", "dirname", "pwd",
    "true", "false", ":", "which", "type", "whoami", "id", "date", "env", "printenv", "uname",
    "hostname", "sleep", "seq", "expr", "let", "fd", "fdfind", "look", "join",
];

/// Programs that run the command named by their arguments.
#[rustfmt::skip]
pub const WRAPPERS: &[&str] = &[
    "env", "sudo", "doas", "command", "exec", "nohup", "time", "nice", "timeout", "stdbuf",
    "setsid", "xargs", "builtin", "unbuffer", "ionice", "flock", "watch", "coproc", "chronic",
    "caffeinate", "taskset", "chrt", "prlimit", "unshare", "nsenter", "firejail", "torsocks",
    "proxychains", "proxychains4", "faketime", "catchsegv", "strace", "ltrace", "valgrind",
];

#[rustfmt::skip]
pub const SHELLS: &[&str] = &[
    "sh", "bash", "zsh", "dash", "ksh", "ash", "mksh", "busybox", "fish", "csh", "tcsh",
];

/// Interpreters and the options that give them program text.
pub const INTERPRETERS: &[(&str, &[&str])] = &[
    ("python", &["-c"]),
    ("python2", &["-c"]),
    ("python3", &["-c"]),
    ("pypy", &["-c"]),
    ("pypy3", &["-c"]),
    ("perl", &["-e", "-E"]),
    ("ruby", &["-e"]),
    ("node", &["-e", "--eval", "-p", "--print"]),
    ("nodejs", &["-e", "--eval", "-p", "--print"]),
    ("deno", &["eval"]),
    ("bun", &["-e", "--eval"]),
    ("php", &["-r"]),
    ("lua", &["-e"]),
    ("tclsh", &[]),
    ("osascript", &["-e"]),
    ("Rscript", &["-e"]),
    ("julia", &["-e"]),
];

/// The awks: their first operand is the program, unless `-f` names its file.
pub const AWKS: &[&str] = &["awk", "gawk", "mawk", "nawk", "original-awk"];

/// Programs that run another under a pseudo-terminal or drive one: a human-only command
/// named in their text is refused like the command itself.
#[rustfmt::skip]
pub const PTY_SPAWNERS: &[&str] = &[
    "script", "expect", "socat", "unbuffer", "empty", "ptyget", "tmux", "screen", "dtach",
    "abduco", "zpty",
];

pub fn basename(program: &str) -> &str {
    program.rsplit('/').next().unwrap_or(program)
}

/// The interpreter's program-text options, when `name` is one (`python3.12` too).
pub fn interpreter(name: &str) -> Option<&'static [&'static str]> {
    let base = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    INTERPRETERS
        .iter()
        .find(|(n, _)| *n == name || *n == base)
        .map(|(_, options)| *options)
}

/// What a wrapper chain (`env X=1 timeout 5 nice -n 2 cmd…`) runs: the command, the
/// environment settings made on the way, and whether the command's arguments come from
/// its stdin too (`xargs`).
pub struct Unwrapped {
    pub args: Vec<Arg>,
    pub assignments: Vec<(String, Arg)>,
    pub from_stdin: bool,
}

pub fn unwrap(args: &[Arg]) -> Result<Unwrapped, Reason> {
    let mut rest: &[Arg] = args;
    let mut assignments = Vec::new();
    let mut from_stdin = false;
    while let Some(first) = rest.first() {
        let Some(value) = first.value() else { break };
        let name = basename(value);
        if !WRAPPERS.contains(&name) {
            break;
        }
        if name == "xargs" {
            from_stdin = true;
        }
        rest = &rest[1..];
        let mut locked = false;
        while let Some(next) = rest.first() {
            let Some(word) = next.value() else {
                return Err(Reason::new(
                    Rule::Unknowable(Unknown::Program),
                    next.unknown.clone().unwrap_or_else(|| next.text.clone()),
                ));
            };
            if word.starts_with('-') {
                if name == "env"
                    && (word == "-S"
                        || word.starts_with("--split-string")
                        || (word.starts_with('-') && !word.starts_with("--") && word.contains('S')))
                {
                    // `env -S` splits a string into the command: read it as a line.
                    return Err(Reason::new(Rule::Unknowable(Unknown::Program), "env -S"));
                }
                if name == "flock" && matches!(word, "-c" | "--command") {
                    let script = rest.get(1).cloned().unwrap_or_else(|| Arg::known(""));
                    return Ok(Unwrapped {
                        args: vec![Arg::known("sh"), Arg::known("-c"), script],
                        assignments,
                        from_stdin,
                    });
                }
                let sudo_cluster = name == "sudo"
                    && !word.starts_with("--")
                    && word.ends_with(['u', 'g', 'C', 'D', 'h', 'p', 'U', 'r', 't', 'T']);
                let takes_value = sudo_cluster
                    || matches!(
                        (name, word),
                        ("nice", "-n")
                            | ("timeout", "-s" | "-k" | "--signal" | "--kill-after")
                            | ("env", "-u" | "-C" | "--unset" | "--chdir")
                            | ("exec", "-a")
                            | ("ionice", "-c" | "-n" | "-p" | "-P" | "-u")
                            | ("flock", "-w" | "-E" | "--timeout" | "--conflict-exit-code")
                            | ("watch", "-n" | "-d" | "--interval")
                            | (
                                "xargs",
                                "-I" | "-n"
                                    | "-P"
                                    | "-L"
                                    | "-d"
                                    | "-E"
                                    | "-s"
                                    | "-a"
                                    | "--arg-file"
                                    | "--delimiter"
                                    | "--max-args"
                                    | "--max-procs"
                            )
                            | ("stdbuf", "-i" | "-o" | "-e")
                            | ("taskset" | "chrt" | "prlimit", _)
                    );
                if name == "xargs" && (word == "-a" || word.starts_with("--arg-file")) {
                    // The arguments come from a file the guard does not read.
                    from_stdin = true;
                }
                // `env -u GIT_ORCHESTRATE_ROLE`: the role taken away is a role set.
                if name == "env" {
                    let unset = match word.strip_prefix("--unset=") {
                        Some(var) => Some(var),
                        None if matches!(word, "-u" | "--unset") => {
                            rest.get(1).map(|a| a.text.as_str())
                        }
                        None => None,
                    };
                    if unset == Some(ROLE_ENV) {
                        assignments.push((ROLE_ENV.to_string(), Arg::known("")));
                    }
                }
                rest = &rest[1..];
                if takes_value && !word.contains('=') && !rest.is_empty() {
                    rest = &rest[1..];
                }
            } else if let Some((var, value)) =
                word.split_once('=').filter(|(n, _)| shell::is_name(n))
            {
                assignments.push((var.to_string(), Arg::known(value)));
                rest = &rest[1..];
            } else if name == "timeout" && word.starts_with(|c: char| c.is_ascii_digit()) {
                rest = &rest[1..];
            } else if name == "flock" && !locked {
                // `flock FILE CMD…`: the lock file first.
                locked = true;
                rest = &rest[1..];
            } else {
                break;
            }
        }
    }
    Ok(Unwrapped {
        args: rest.to_vec(),
        assignments,
        from_stdin,
    })
}

/// `sh -c SCRIPT` (also `-ec`, `-lc`, …): the script's argument index.
pub fn shell_script(args: &[Arg]) -> Option<usize> {
    let mut command = false;
    let mut at = 0;
    while at < args.len() {
        let text = args[at].text.as_str();
        if text == "--" {
            at += 1;
            continue;
        }
        if matches!(text, "-o" | "+o" | "-O" | "+O" | "--rcfile" | "--init-file") {
            at += 2;
            continue;
        }
        if text.starts_with('-') && !text.starts_with("--") && text.contains('c') {
            command = true;
            at += 1;
            continue;
        }
        if !text.starts_with('-') && !text.starts_with('+') {
            return command.then_some(at);
        }
        at += 1;
    }
    None
}

/// How a shell (`sh`, `bash -s`, `source`) gets its script: from `-c`, a file, or stdin.
pub enum ShellInput {
    Command(usize),
    File(usize),
    Stdin,
    /// Only checks it (`sh -n`).
    Nothing,
}

pub fn shell_input(name: &str, args: &[Arg]) -> ShellInput {
    if matches!(name, "source" | ".") {
        return match args.first() {
            Some(a)
                if matches!(
                    a.value(),
                    Some("/dev/stdin" | "/proc/self/fd/0" | "/dev/fd/0" | "-")
                ) =>
            {
                ShellInput::Stdin
            }
            Some(_) => ShellInput::File(0),
            None => ShellInput::Nothing,
        };
    }
    if let Some(at) = shell_script(args) {
        return ShellInput::Command(at);
    }
    let mut at = 0;
    while at < args.len() {
        let text = args[at].text.as_str();
        let short = text.starts_with('-') && !text.starts_with("--") && text.len() > 1;
        if short && text.contains('s') {
            return ShellInput::Stdin;
        }
        if short && text.contains('n') {
            return ShellInput::Nothing;
        }
        if short && text.contains('c') {
            // `sh -c` with its script still to come (`xargs sh -c`): unknowable.
            return ShellInput::Command(args.len());
        }
        if matches!(text, "-o" | "+o" | "-O" | "+O" | "--rcfile" | "--init-file") {
            at += 2;
            continue;
        }
        if text.starts_with('-') || text.starts_with('+') {
            at += 1;
            continue;
        }
        if matches!(
            args[at].value(),
            Some("/dev/stdin" | "/proc/self/fd/0" | "/dev/fd/0" | "-")
        ) {
            return ShellInput::Stdin;
        }
        return ShellInput::File(at);
    }
    ShellInput::Stdin
}

/// An interpreter's program text, where its arguments give it: `Some(Some(i))` the
/// argument at `i`; `Some(None)` its stdin; `None` a script file or a module.
pub fn interpreter_code(options: &[&str], args: &[Arg]) -> Option<Option<usize>> {
    let mut at = 0;
    while at < args.len() {
        let text = args[at].text.as_str();
        if let Some(option) = options.iter().find(|o| {
            text == **o || (text.starts_with(**o) && o.len() == 2 && !text.starts_with("--"))
        }) {
            return Some(if text.len() > option.len() {
                Some(at)
            } else {
                Some(at + 1)
            });
        }
        // A bundle of short options that ends with the code's (`perl -le`, `python3 -Sc`).
        if text.len() > 2
            && text.starts_with('-')
            && !text.starts_with("--")
            && text[1..].chars().all(|c| c.is_ascii_alphabetic())
            && options
                .iter()
                .any(|o| o.len() == 2 && text.ends_with(&o[1..]))
        {
            return Some(Some(at + 1));
        }
        if text == "-" {
            return Some(None);
        }
        if text == "-m" || !text.starts_with('-') {
            return None;
        }
        at += 1;
    }
    Some(None)
}

/// Where an awk's program text is among its arguments: the first operand, or what `-e`
/// gives; `None` when `-f` reads it from a file.
pub fn awk_program(args: &[Arg]) -> Option<usize> {
    let mut at = 0;
    while at < args.len() {
        let text = args[at].text.as_str();
        match text {
            "-f" | "--file" => return None,
            "-e" | "--source" => return Some(at + 1).filter(|i| *i < args.len()),
            "--" => return Some(at + 1).filter(|i| *i < args.len()),
            // Options that take the next word.
            "-F" | "-v" | "-i" | "-l" | "--field-separator" | "--assign" | "--include"
            | "--load" => at += 2,
            _ if text.starts_with("-f") || text.starts_with("--file=") => return None,
            _ if text.starts_with('-') && text.len() > 1 => at += 1,
            _ => return Some(at),
        }
    }
    None
}

/// A preflight gate's command line run as configured, or its script run directly (by
/// path or through an interpreter). `sh -n SCRIPT` only reads it.
pub fn gate_command(args: &[String], ctx: &GuardContext, cwd: &Path) -> Option<Reason> {
    let first = args.first()?;
    if SHELLS.contains(&basename(first))
        && args[1..]
            .iter()
            .take_while(|w| w.starts_with('-'))
            .any(|w| !w.starts_with("--") && w.contains('n'))
    {
        return None;
    }
    for gate in &ctx.gate_commands {
        let Ok(simples) = shell::parse(gate) else {
            continue;
        };
        for simple in simples {
            let Some(words) = simple
                .words
                .iter()
                .map(shell::Word::literal)
                .collect::<Option<Vec<String>>>()
            else {
                continue;
            };
            let known: Vec<Arg> = words.iter().map(Arg::known).collect();
            let Ok(unwrapped) = unwrap(&known) else {
                continue;
            };
            let gate_words: Vec<String> = unwrapped.args.into_iter().map(|a| a.text).collect();
            // A gate of one builtin (`true`) is no test anyone could run by accident.
            if gate_words.is_empty()
                || (gate_words.len() == 1
                    && matches!(gate_words[0].as_str(), "true" | "false" | ":"))
            {
                continue;
            }
            // A path is the same file named another way (`./run_tests.sh`, `/repo/x.sh`,
            // `../x.sh` from a subdirectory), never just another file of the same name.
            let same_path = |a: &str, b: &str| {
                (a.contains('/') || b.contains('/'))
                    && normalize(&cwd.join(a)) == normalize(&ctx.root.join(b))
            };
            let same_words = args.len() == gate_words.len()
                && args
                    .iter()
                    .zip(&gate_words)
                    .all(|(a, b)| a == b || same_path(a, b));
            let same_script = script_of(args)
                .zip(script_of(&gate_words))
                .is_some_and(|(a, b)| normalize(&cwd.join(a)) == normalize(&ctx.root.join(b)));
            if same_words || same_script {
                return Some(Reason::new(Rule::GateCommand(gate.clone()), args.join(" ")));
            }
        }
    }
    None
}

/// The repository script a command runs: `./x.sh`, `sh x.sh`, `python3 tests/run.py`; not a
/// module (`-m`), program text (`-c`) or a program found by name.
fn script_of(words: &[String]) -> Option<&str> {
    let program = words.first()?;
    let name = basename(program);
    if SHELLS.contains(&name) || interpreter(name).is_some() {
        for w in &words[1..] {
            if matches!(w.as_str(), "-m" | "-c" | "-e" | "-E")
                || (w.starts_with('-') && w.contains('c') && SHELLS.contains(&name))
            {
                return None;
            }
            if !w.starts_with('-') {
                return Some(w.trim_start_matches("./"));
            }
        }
        return None;
    }
    program
        .contains('/')
        .then(|| program.trim_start_matches("./"))
}

/// `git orchestrate …` / `git-orchestrate …`: the human-only commands, and in a session
/// that plays a ticket role, the other role's tools and any `--role` naming another role.
pub fn orchestrate(args: &[Arg], role: Option<Role>) -> Result<(), Reason> {
    let texts: Vec<&str> = args.iter().map(|a| a.text.as_str()).collect();
    let mut iter = texts.iter().peekable();
    while let Some(arg) = iter.peek() {
        if **arg == "--workflow" {
            iter.next();
            iter.next();
        } else if arg.starts_with('-') {
            iter.next();
        } else {
            break;
        }
    }
    let Some(sub_arg) = args.get(texts.len() - iter.len()) else {
        return Ok(());
    };
    let Some(sub) = sub_arg.value() else {
        return Err(Reason::new(
            Rule::Unknowable(Unknown::Program),
            sub_arg.unknown.clone().unwrap_or_default(),
        ));
    };
    iter.next();
    if let Some(role) = role {
        other_role(sub, args, role)?;
    }
    let mut words = Vec::new();
    while let Some(arg) = iter.next() {
        if *arg == "--workflow" {
            iter.next();
        } else if !arg.starts_with('-') {
            words.push(*arg);
        }
    }
    let human = |what: &str| {
        Err(Reason::new(
            Rule::HumanOnly,
            format!("git orchestrate {what}"),
        ))
    };
    if HUMAN_COMMANDS.contains(&sub) {
        return human(sub);
    }
    match sub {
        "hooks" if words.first() == Some(&"uninstall") => human("hooks uninstall"),
        "hooks"
            if words.first() == Some(&"install")
                && texts.iter().any(|a| a.starts_with("--manager")) =>
        {
            human("hooks install --manager")
        }
        "init" if texts.contains(&"--remove") => human("init --agent … --remove"),
        "claim"
            if words
                .first()
                .is_some_and(|w| matches!(*w, "release" | "steal")) =>
        {
            human(&format!("claim {}", words[0]))
        }
        _ => Ok(()),
    }
}

/// The other role's tool as the subcommand `sub`, or a `--role` anywhere that names another
/// role (or one the guard cannot read), in a `git orchestrate` call of a session playing
/// `role`.
fn other_role(sub: &str, args: &[Arg], role: Role) -> Result<(), Reason> {
    let refused = |word: String| Err(Reason::new(Rule::OtherRole(role), word));
    if crate::product::ticket_command_role(sub).is_some_and(|owner| owner != role) {
        return refused(format!("git orchestrate {sub}"));
    }
    for (at, arg) in args.iter().enumerate() {
        let Some(text) = arg.value() else { continue };
        let named = match text.strip_prefix("--role=") {
            Some(value) => Some(Some(value.to_string())),
            None if text == "--role" => {
                Some(args.get(at + 1).and_then(|a| a.value().map(str::to_string)))
            }
            None => None,
        };
        match named {
            Some(Some(value)) if Role::parse(&value) == Some(role) => {}
            Some(Some(value)) => return refused(format!("--role {value}")),
            Some(None) => {
                return Err(Reason::new(
                    Rule::Unknowable(Unknown::GitArgument),
                    args.get(at + 1)
                        .and_then(|a| a.unknown.clone())
                        .unwrap_or_else(|| "--role".into()),
                ));
            }
            None => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(words: &[&str]) -> Vec<Arg> {
        words.iter().map(|w| Arg::known(*w)).collect()
    }

    #[test]
    fn wrappers_unwrap_to_the_command_they_run() {
        let unwrapped = unwrap(&args(&[
            "env", "A=1", "timeout", "-s", "KILL", "5", "nice", "-n", "3", "git", "commit",
        ]))
        .unwrap();
        let texts: Vec<&str> = unwrapped.args.iter().map(|a| a.text.as_str()).collect();
        assert_eq!(texts, ["git", "commit"]);
        assert_eq!(
            unwrapped.assignments,
            vec![("A".to_string(), Arg::known("1"))]
        );
        assert!(unwrap(&args(&["xargs", "-n1", "rm"])).unwrap().from_stdin);
        assert!(unwrap(&args(&["env", "-S", "git commit -n"])).is_err());
    }

    #[test]
    fn interpreters_say_where_their_code_is() {
        let python = interpreter("python3.12").unwrap();
        assert_eq!(
            interpreter_code(python, &args(&["-c", "print(1)"])),
            Some(Some(1))
        );
        assert_eq!(interpreter_code(python, &args(&["-m", "pytest"])), None);
        assert_eq!(interpreter_code(python, &args(&["x.py"])), None);
        assert_eq!(interpreter_code(python, &args(&[])), Some(None));
        assert_eq!(interpreter_code(python, &args(&["-u", "-"])), Some(None));
        assert_eq!(
            interpreter_code(python, &args(&["-Sc", "print(1)"])),
            Some(Some(1))
        );
        let perl = interpreter("perl").unwrap();
        assert_eq!(
            interpreter_code(perl, &args(&["-le", "print 1"])),
            Some(Some(1))
        );
        assert_eq!(
            interpreter_code(perl, &args(&["-pi", "-e", "s/a/b/", "f"])),
            Some(Some(2))
        );
    }

    #[test]
    fn an_awk_program_is_its_first_operand() {
        assert_eq!(awk_program(&args(&["{print $1}", "f"])), Some(0));
        assert_eq!(
            awk_program(&args(&["-F", ",", "-v", "x=1", "BEGIN{}"])),
            Some(4)
        );
        assert_eq!(awk_program(&args(&["-F,", "BEGIN{}"])), Some(1));
        assert_eq!(awk_program(&args(&["-f", "prog.awk", "data"])), None);
        assert_eq!(awk_program(&args(&["-e", "BEGIN{}"])), Some(1));
    }
}
