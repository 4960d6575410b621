//! The pre-tool-use guard (SPEC §11): decides whether an agent's shell command or file write
//! could reach the hooks, the orchestrator's refs and state, the main branch, a protected
//! path or a human's answer, and names the legal route when it could. It judges by a model
//! of reach: each word is known, a glob, or unknowable, and a command whose program, script
//! or written path it cannot know, where that could reach something protected, is refused.
//! The orchestrator never relies on it alone (docs/agent-guide.md, "The guard's limits").

mod git;
mod git_options;
mod patch;
mod paths;
pub mod policy;
mod programs;
mod words;

#[cfg(test)]
mod tests;

use std::path::PathBuf;

pub use paths::glob_match;
pub use policy::{Reason, Rule};

use crate::agent::shell::{self, Joint, Simple, Stdin, Word};
use paths::{Checker, Cwds, mentions_internals};
use policy::{COMMAND_VARIABLES, Unknown, names_human_command, risky_setting, risky_variable};
use programs::{ShellInput, basename};
use words::{Arg, Known, Vars};

/// What the guard knows about the repository, gathered by the engine.
#[derive(Clone, Debug, Default)]
pub struct GuardContext {
    /// The repository's top directory and the directory the command runs in.
    pub root: PathBuf,
    pub cwd: PathBuf,
    /// The git directory and the hooks directory, absolute.
    pub git_dir: PathBuf,
    pub hooks_dir: PathBuf,
    pub main_branch: String,
    /// The branch HEAD is on, if any.
    pub head_branch: Option<String>,
    /// The preflight gates' commands: running one directly is what submit-work is for.
    pub gate_commands: Vec<String>,
    /// Paths (relative to the root) an agent must not change: the config, the scripts the
    /// gates and reviewer run. `[gates] protected` globs are in `protected_globs`.
    pub protected_files: Vec<String>,
    pub protected_globs: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    Allow,
    Deny(Reason),
}

/// More simple commands than this in one call is refused rather than followed.
const MAX_COMMANDS: usize = 200_000;
/// Lines inside lines (`sh -c "eval '…'"`) deeper than this are refused.
const MAX_DEPTH: usize = 8;

/// Judges a shell command line.
pub fn check_shell(line: &str, ctx: &GuardContext) -> Decision {
    let mut walk = Walk::new(ctx);
    match walk.line(line) {
        Ok(()) => Decision::Allow,
        Err(reason) => Decision::Deny(reason),
    }
}

/// Judges a write to `path` (a file tool's `file_path`).
pub fn check_file_write(path: &str, ctx: &GuardContext) -> Decision {
    match Checker::new(ctx).written(path, &ctx.cwd) {
        Ok(()) => Decision::Allow,
        Err(reason) => Decision::Deny(reason),
    }
}

/// Judges a patch in Codex's `apply_patch` format: the files it adds, updates, deletes or
/// moves to.
pub fn check_patch(patch: &str, ctx: &GuardContext) -> Decision {
    let mut checker = Checker::new(ctx);
    for path in patch::apply_patch_targets(patch) {
        if let Err(reason) = checker.written(&path, &ctx.cwd) {
            return Decision::Deny(reason);
        }
    }
    Decision::Allow
}

/// One command line being judged, with what it has set so far: variables, directories,
/// the branch HEAD is on.
pub(crate) struct Walk<'c> {
    paths: Checker<'c>,
    vars: Vars,
    cwds: Cwds,
    head: Option<String>,
    home: Option<String>,
    depth: usize,
    commands: usize,
}

impl<'c> Walk<'c> {
    fn new(ctx: &'c GuardContext) -> Walk<'c> {
        Walk {
            paths: Checker::new(ctx),
            vars: Vars::default(),
            cwds: Cwds::new(&ctx.cwd),
            head: ctx.head_branch.clone(),
            home: std::env::var("HOME").ok(),
            depth: 0,
            commands: 0,
        }
    }

    /// A command line: its own, or one a shell, `eval` or a hook variable runs.
    fn line(&mut self, text: &str) -> Result<(), Reason> {
        if self.depth >= MAX_DEPTH {
            return Err(Reason::new(Rule::TooMuch, "commands nested in commands"));
        }
        let commands = shell::parse(text).map_err(|e| {
            let rule = if e.too_much {
                Rule::TooMuch
            } else {
                Rule::Unreadable
            };
            Reason::new(rule, e.message)
        })?;
        self.commands += commands.len();
        if self.commands > MAX_COMMANDS {
            return Err(Reason::new(
                Rule::TooMuch,
                format!("{} commands", self.commands),
            ));
        }
        self.depth += 1;
        for (at, simple) in commands.iter().enumerate() {
            // A `cd` the next command depends on (`cd x && …`) is where that one runs.
            let then_and = commands[at + 1..]
                .iter()
                .find(|c| !c.nested || simple.nested)
                .is_some_and(|c| c.joint == Joint::And);
            let result = self.simple(simple, then_and && !simple.nested);
            if result.is_err() {
                self.depth -= 1;
                return result;
            }
        }
        self.depth -= 1;
        Ok(())
    }

    fn known(&self) -> Known<'_> {
        let cwd = match self.cwds.known.as_slice() {
            [one] if !self.cwds.unknown => Some(one.as_path()),
            _ => None,
        };
        Known {
            cwd,
            root: &self.paths.ctx.root,
            head_branch: self.head.as_deref(),
            home: self.home.as_deref(),
        }
    }

    fn resolve(&self, word: &Word) -> Vec<Arg> {
        self.vars.resolve(word, &self.known())
    }

    fn simple(&mut self, simple: &Simple, cd_certain: bool) -> Result<(), Reason> {
        let certain = !simple.nested && simple.joint == Joint::Seq;
        for word in &simple.assignments {
            let Some((name, append, value)) = word.assignment() else {
                continue;
            };
            let values = self.resolve(&value);
            self.variable(&name, &values)?;
            if simple.words.is_empty() {
                let values = if append {
                    vec![Arg::unknowable(format!("${name}"))]
                } else {
                    values
                };
                self.vars.assign(&name, values, certain);
            }
        }
        for target in &simple.writes {
            for arg in self.resolve(target) {
                self.paths.target(&arg, &self.cwds, false)?;
            }
        }
        let mut words: &[Word] = &simple.words;
        match words.first().and_then(Word::literal).as_deref() {
            Some("for" | "select") => {
                if let Some(name) = words.get(1).and_then(Word::literal) {
                    let list: Vec<Arg> = match words.get(2).and_then(Word::literal).as_deref() {
                        Some("in") => words[3..].iter().flat_map(|w| self.resolve(w)).collect(),
                        _ => vec![Arg::unknowable(format!("${name}"))],
                    };
                    self.variable(&name, &list)?;
                    let nonempty = !list.is_empty();
                    self.vars.assign(&name, list, nonempty && !simple.nested);
                }
                return Ok(());
            }
            Some("case") => return Ok(()),
            Some("function") => {
                words = &words[words.len().min(2)..];
                while words
                    .first()
                    .is_some_and(|w| matches!(w.raw.as_str(), "{" | "()" | "("))
                {
                    words = &words[1..];
                }
            }
            _ => {}
        }
        // `builtin cd x`, `command export X=1`: the builtin itself.
        if words.len() > 1
            && matches!(words[0].literal().as_deref(), Some("builtin" | "command"))
            && !words[1].raw.starts_with('-')
        {
            words = &words[1..];
        }
        let Some(first) = words.first() else {
            return Ok(());
        };
        let program = self.resolve(first);
        match program.as_slice() {
            [one] if one.is_known() => {}
            _ => {
                let shown = program
                    .iter()
                    .find_map(|a| a.unknown.clone())
                    .unwrap_or_else(|| first.text());
                return Err(Reason::new(Rule::Unknowable(Unknown::Program), shown));
            }
        }
        if let Some(done) = self.builtin(&program[0].text, words, simple, cd_certain)? {
            return done;
        }
        let mut args = program;
        for word in &words[1..] {
            args.extend(self.resolve(word));
        }
        self.command(args, simple)
    }

    /// The shell's own commands that set variables or move the directory; `None` for any
    /// other program.
    fn builtin(
        &mut self,
        program: &str,
        words: &[Word],
        simple: &Simple,
        cd_certain: bool,
    ) -> Result<Option<Result<(), Reason>>, Reason> {
        let certain = !simple.nested && simple.joint == Joint::Seq;
        match program {
            "export" | "declare" | "typeset" | "readonly" | "local" => {
                for word in &words[1..] {
                    if let Some((name, append, value)) = word.assignment() {
                        let values = self.resolve(&value);
                        self.variable(&name, &values)?;
                        let values = if append {
                            vec![Arg::unknowable(format!("${name}"))]
                        } else {
                            values
                        };
                        self.vars.assign(&name, values, certain);
                    } else if let Some(name) = word.literal() {
                        // `export NAME`: what it holds already goes to every later program.
                        if name == policy::HUMAN_VARIABLE {
                            return Err(Reason::new(Rule::Variable(policy::Variable::Human), name));
                        }
                    } else {
                        return Err(Reason::new(Rule::Unknowable(Unknown::Program), word.text()));
                    }
                }
                Ok(Some(Ok(())))
            }
            "read" | "mapfile" | "readarray" | "getopts" => {
                let args: Vec<Arg> = words[1..].iter().flat_map(|w| self.resolve(w)).collect();
                let mut i = 0;
                while i < args.len() {
                    let text = args[i].text.as_str();
                    if text.starts_with('-') {
                        // Options that take a value (`-p PROMPT`, `-d DELIM`…), `-a NAME` names.
                        if matches!(
                            text,
                            "-p" | "-d"
                                | "-n"
                                | "-N"
                                | "-t"
                                | "-u"
                                | "-i"
                                | "-C"
                                | "-c"
                                | "-O"
                                | "-s"
                        ) {
                            i += 1;
                        }
                        if text == "-a" {
                            i += 1;
                            if let Some(name) = args.get(i) {
                                self.set_unknown(&name.text)?;
                            }
                        }
                    } else if program != "getopts" || i > 0 {
                        self.set_unknown(text)?;
                    }
                    i += 1;
                }
                Ok(Some(Ok(())))
            }
            "printf" if words.get(1).and_then(Word::literal).as_deref() == Some("-v") => {
                if let Some(name) = words.get(2) {
                    let name = name.literal().unwrap_or_else(|| name.text());
                    self.set_unknown(&name)?;
                }
                Ok(Some(Ok(())))
            }
            "unset" => {
                for word in &words[1..] {
                    if let Some(name) = word.literal().filter(|n| !n.starts_with('-')) {
                        self.vars.assign(&name, vec![Arg::known("")], certain);
                    }
                }
                Ok(Some(Ok(())))
            }
            "cd" | "pushd" | "chdir" => {
                // Options (`-P`, `-L`) and `--` come before the directory.
                let is_option = |raw: &str| {
                    raw == "--"
                        || (raw.starts_with('-')
                            && raw.len() > 1
                            && raw
                                .chars()
                                .skip(1)
                                .all(|c| matches!(c, 'L' | 'P' | 'e' | '@')))
                };
                let operand = words[1..].iter().find(|w| !is_option(&w.raw));
                let dir: Option<String> = match operand {
                    None => self.home.clone(),
                    Some(w) if w.raw == "-" => None,
                    Some(w) => match self.resolve(w).as_slice() {
                        [one] => one.value().map(str::to_string),
                        _ => None,
                    },
                };
                self.cwds.change(dir.as_deref(), cd_certain);
                Ok(Some(Ok(())))
            }
            "popd" => {
                self.cwds.change(None, false);
                Ok(Some(Ok(())))
            }
            _ => Ok(None),
        }
    }

    /// A variable set by something the guard cannot see (`read x`).
    fn set_unknown(&mut self, name: &str) -> Result<(), Reason> {
        if let Some(kind) = risky_variable(name, None) {
            return Err(Reason::new(Rule::Variable(kind), name));
        }
        self.vars.forget(name);
        Ok(())
    }

    /// An environment variable set to one of `values`.
    fn variable(&mut self, name: &str, values: &[Arg]) -> Result<(), Reason> {
        let texts: Vec<&str> = if values.is_empty() {
            vec![""]
        } else {
            values.iter().map(|a| a.text.as_str()).collect()
        };
        for value in &texts {
            if let Some(kind) = risky_variable(name, Some(value)) {
                return Err(Reason::new(Rule::Variable(kind), format!("{name}={value}")));
            }
        }
        if name.starts_with("GIT_CONFIG_KEY_") || name == "GIT_CONFIG_PARAMETERS" {
            for value in values {
                if !value.is_known() {
                    return Err(Reason::new(
                        Rule::Unknowable(Unknown::GitArgument),
                        value.unknown.clone().unwrap_or_default(),
                    ));
                }
                // `'core.hooksPath'='/x' 'a.b'='c'`: each key before its `=`.
                for setting in value.text.split_whitespace() {
                    let key = setting.split('=').next().unwrap_or_default();
                    if let Some(kind) = risky_setting(key) {
                        return Err(Reason::new(
                            Rule::Setting(kind),
                            format!("{name}={}", value.text),
                        ));
                    }
                }
            }
        }
        if COMMAND_VARIABLES.contains(&name) {
            for value in values {
                match value.value() {
                    Some(command) => self.line(command)?,
                    None => {
                        return Err(Reason::new(
                            Rule::Unknowable(Unknown::Script),
                            value.unknown.clone().unwrap_or_default(),
                        ));
                    }
                }
            }
        }
        Ok(())
    }

    /// A program run with its arguments (after the words are resolved).
    fn command(&mut self, args: Vec<Arg>, simple: &Simple) -> Result<(), Reason> {
        let unwrapped = programs::unwrap(&args)?;
        for (name, value) in &unwrapped.assignments {
            self.variable(name, std::slice::from_ref(value))?;
        }
        let mut args = unwrapped.args;
        if unwrapped.from_stdin {
            args.push(Arg::unknowable("the arguments xargs reads"));
        }
        let Some(first) = args.first() else {
            return Ok(());
        };
        let Some(program) = first.value().map(str::to_string) else {
            return Err(Reason::new(
                Rule::Unknowable(Unknown::Program),
                first.unknown.clone().unwrap_or_default(),
            ));
        };
        let name = basename(&program).to_string();
        let name = name.as_str();
        if let Some(texts) = args
            .iter()
            .map(|a| a.value().map(str::to_string))
            .collect::<Option<Vec<String>>>()
        {
            for cwd in &self.cwds.known {
                if let Some(reason) = programs::gate_command(&texts, self.paths.ctx, cwd) {
                    return Err(reason);
                }
            }
        }
        let rest = &args[1..];
        match name {
            "git" => {
                let stdin = self.stdin_text(simple, "git")?;
                self.git(rest, stdin.as_deref())?;
                if let Some(branch) = git::switched_branch(&args, &self.paths.ctx.main_branch) {
                    self.head = Some(branch);
                }
                return Ok(());
            }
            "git-orchestrate" => return programs::orchestrate(rest),
            "eval" => {
                let text = known_text(rest, "eval")?;
                return self.line(&text);
            }
            "trap" => {
                if let Some(action) = rest.first().filter(|a| !a.text.starts_with('-')) {
                    let text = known_text(std::slice::from_ref(action), "trap")?;
                    self.line(&text)?;
                }
                return Ok(());
            }
            "find" => return self.find(rest),
            "apply_patch" | "applypatch" => {
                let text = match rest.first() {
                    Some(patch) => known_text(std::slice::from_ref(patch), name)?,
                    None => self.stdin_text(simple, name)?.unwrap_or_default(),
                };
                if let Decision::Deny(reason) = check_patch(&text, self.paths.ctx) {
                    return Err(reason);
                }
                return Ok(());
            }
            "patch" => {
                let input = rest
                    .windows(2)
                    .find(|w| matches!(w[0].text.as_str(), "-i" | "--input"))
                    .map(|w| w[1].clone());
                match input {
                    Some(file) => self.patch_files(std::slice::from_ref(&file), None, "patch")?,
                    None => {
                        let stdin = self.stdin_text(simple, "patch")?;
                        let from_file: Vec<Arg> =
                            simple.reads.iter().flat_map(|w| self.resolve(w)).collect();
                        if from_file.is_empty() {
                            self.patch_files(&[], stdin.as_deref(), "patch")?;
                        } else {
                            self.patch_files(&from_file, None, "patch")?;
                        }
                    }
                }
            }
            _ => {}
        }
        if programs::SHELLS.contains(&name) || matches!(name, "source" | ".") {
            self.shell(name, rest, simple)?;
        } else if let Some(options) = programs::interpreter(name) {
            match programs::interpreter_code(options, rest) {
                Some(Some(at)) => {
                    let code = known_text(
                        rest.get(at).map(std::slice::from_ref).unwrap_or_default(),
                        name,
                    )?;
                    self.program_text(&code)?;
                }
                Some(None) => {
                    if let Some(code) = self.stdin_text(simple, name)? {
                        self.program_text(&code)?;
                    }
                }
                None => {}
            }
        }
        if programs::PTY_SPAWNERS.contains(&name) {
            for arg in rest {
                if let Some(command) = names_human_command(&arg.text) {
                    return Err(Reason::new(Rule::HumanOnly, command));
                }
            }
            // `script -qc CMD`: the command it runs.
            if name == "script"
                && let Some(at) = rest.iter().position(|a| {
                    a.text == "--command"
                        || (a.text.starts_with('-')
                            && !a.text.starts_with("--")
                            && a.text.ends_with('c'))
                })
            {
                let text = known_text(
                    rest.get(at + 1)
                        .map(std::slice::from_ref)
                        .unwrap_or_default(),
                    name,
                )?;
                self.line(&text)?;
            }
            if let Some(text) = rest.iter().find_map(|a| a.text.strip_prefix("--command=")) {
                self.line(text)?;
            }
            // `expect <<EOF … spawn …`: the script on its stdin.
            if let Ok(Some(text)) = self.stdin_text(simple, name)
                && let Some(command) = names_human_command(&text)
            {
                return Err(Reason::new(Rule::HumanOnly, command));
            }
        }
        if matches!(name, "ln" | "link") {
            self.link(rest)?;
        }
        if let Some(destination) = programs::unpacks(name, rest) {
            let dest = destination.unwrap_or_else(|| Arg::known("."));
            let Some(dir) = dest.value() else {
                return Err(Reason::new(Rule::Archive, program));
            };
            for cwd in self.cwds.known.clone() {
                if self.paths.holds_guarded(dir, &cwd).is_err()
                    || self.paths.written(&format!("{dir}/x"), &cwd).is_err()
                {
                    return Err(Reason::new(
                        Rule::Archive,
                        format!("{program} … (into {dir})"),
                    ));
                }
            }
            if self.cwds.unknown && !dir.starts_with('/') {
                return Err(Reason::new(
                    Rule::Archive,
                    format!("{program} … (into {dir})"),
                ));
            }
        }
        let written = programs::written(name, rest);
        if let Some(targets) = &written {
            for (target, removes) in targets {
                self.paths.target(target, &self.cwds, *removes)?;
            }
        }
        let copies = matches!(name, "cp" | "install" | "ln" | "rsync" | "scp" | "link");
        if copies {
            self.copy(name, rest)?;
        }
        // Anything else that names the git internals or a human's answer (a script, an
        // interpreter's one-liner) is refused too: no agent's command needs to. A copy's
        // sources are only read.
        if copies {
            for (target, _) in written.iter().flatten() {
                self.program_text(&target.text)?;
            }
        } else if !programs::READERS.contains(&name) {
            for arg in rest {
                self.program_text(&arg.text)?;
            }
        }
        Ok(())
    }

    /// Program text (an argument, a one-liner): the git internals or a human-only command
    /// named in it.
    fn program_text(&self, text: &str) -> Result<(), Reason> {
        if let Some(reason) = mentions_internals(text, self.paths.ctx) {
            return Err(reason);
        }
        if let Some(command) = names_human_command(text) {
            return Err(Reason::new(Rule::HumanOnly, command));
        }
        Ok(())
    }

    /// A shell or `source`: the script it runs, from `-c`, a file or its stdin.
    fn shell(&mut self, name: &str, rest: &[Arg], simple: &Simple) -> Result<(), Reason> {
        match programs::shell_input(name, rest) {
            ShellInput::Command(at) => {
                let text = known_text(
                    rest.get(at).map(std::slice::from_ref).unwrap_or_default(),
                    name,
                )?;
                self.line(&text)
            }
            ShellInput::File(at) => {
                let Some(path) = rest[at].value() else {
                    return Err(Reason::new(
                        Rule::Unknowable(Unknown::Script),
                        rest[at].unknown.clone().unwrap_or_default(),
                    ));
                };
                // `source run_tests.sh`, `. ./run_tests.sh`: the gate's script.
                let words = ["sh".to_string(), path.to_string()];
                for cwd in &self.cwds.known {
                    if let Some(reason) = programs::gate_command(&words, self.paths.ctx, cwd) {
                        return Err(reason);
                    }
                }
                Ok(())
            }
            ShellInput::Stdin => {
                // `sh < run_tests.sh`: the gate's script as its stdin.
                for file in simple.reads.iter().flat_map(|w| self.resolve(w)) {
                    if let Some(path) = file.value() {
                        let words = [name.to_string(), path.to_string()];
                        for cwd in &self.cwds.known {
                            if let Some(reason) =
                                programs::gate_command(&words, self.paths.ctx, cwd)
                            {
                                return Err(reason);
                            }
                        }
                    }
                }
                match self.stdin_text(simple, name)? {
                    Some(text) => self.line(&text),
                    None => Ok(()),
                }
            }
            ShellInput::Nothing => Ok(()),
        }
    }

    /// The text a command reads on its stdin when the line shows it (a here-document, or
    /// what `echo`, `printf` or `cat <<EOF` print into a pipe); `None` when it reads a file
    /// or the terminal. Output the line does not show is refused.
    fn stdin_text(&mut self, simple: &Simple, reader: &str) -> Result<Option<String>, Reason> {
        match &simple.stdin {
            None => Ok(None),
            Some(Stdin::Text { text, .. }) => Ok(Some(text.clone())),
            Some(Stdin::Compound) => Err(Reason::new(
                Rule::Unknowable(Unknown::Script),
                format!("what `{reader}` reads from the pipe"),
            )),
            Some(Stdin::Pipe(producer)) => {
                let args: Vec<Arg> = producer
                    .words
                    .iter()
                    .flat_map(|w| self.resolve(w))
                    .collect();
                let unknowable = |what: &str| {
                    Err(Reason::new(
                        Rule::Unknowable(Unknown::Script),
                        format!("what `{what}` prints into `{reader}`"),
                    ))
                };
                let Some(program) = args.first().and_then(Arg::value) else {
                    return unknowable("the command");
                };
                match basename(program) {
                    "echo" | "printf" => {
                        let texts = known_text(&args[1..], program)?;
                        Ok(Some(decode_escapes(&texts)))
                    }
                    "cat" if args.len() == 1 => match &producer.stdin {
                        Some(Stdin::Text { text, .. }) => Ok(Some(text.clone())),
                        _ => unknowable("cat"),
                    },

                    other => unknowable(other),
                }
            }
        }
    }

    /// `find START… EXPR`: `-delete`, `-exec CMD {} ;` and `-fprint FILE` on what it finds.
    fn find(&mut self, args: &[Arg]) -> Result<(), Reason> {
        let starts: Vec<&Arg> = args
            .iter()
            .take_while(|a| {
                !a.text.starts_with('-') && !matches!(a.text.as_str(), "(" | "!" | "\\(")
            })
            .collect();
        let names: Vec<&Arg> = args
            .windows(2)
            .filter(|w| matches!(w[0].text.as_str(), "-name" | "-iname"))
            .map(|w| &w[1])
            .collect();
        let paths: Vec<&Arg> = args
            .windows(2)
            .filter(|w| {
                matches!(
                    w[0].text.as_str(),
                    "-path" | "-ipath" | "-wholename" | "-iwholename"
                )
            })
            .map(|w| &w[1])
            .collect();
        let alternatives = args
            .iter()
            .any(|a| matches!(a.text.as_str(), "-o" | "-or" | "!" | "-not" | ","));
        let name_pattern = match names.as_slice() {
            [one] if !alternatives && one.is_known() => one.text.clone(),
            _ => String::new(),
        };
        let dot = Arg::known(".");
        let starts = if starts.is_empty() {
            vec![&dot]
        } else {
            starts
        };
        // `-path PATTERN` matches the whole path as find prints it, from its start.
        let by_path: Option<Arg> = match paths.as_slice() {
            [one] if !alternatives && one.is_known() => Some(Arg {
                text: "{}".into(),
                pattern: Some(one.text.clone()),
                unknown: Some("{} (the files find finds)".into()),
            }),
            _ => None,
        };
        // What `{}` stands for: anything under the starts, whose name matches.
        let found: Vec<Arg> = starts
            .iter()
            .map(|start| match start.value() {
                Some(dir) => Arg {
                    text: "{}".into(),
                    pattern: Some(format!(
                        "{}/*{name_pattern}",
                        words::escape(dir.trim_end_matches('/'))
                    )),
                    unknown: Some("{} (the files find finds)".into()),
                },
                None => Arg::unknowable(start.unknown.clone().unwrap_or_default()),
            })
            .collect();
        let found: Vec<Arg> = match by_path {
            Some(arg) => vec![arg],
            None => found,
        };
        let mut i = 0;
        while i < args.len() {
            match args[i].text.as_str() {
                "-delete" => {
                    for arg in &found {
                        self.paths.target(arg, &self.cwds, true)?;
                    }
                }
                "-fprint" | "-fprint0" | "-fprintf" | "-fls" => {
                    if let Some(file) = args.get(i + 1) {
                        self.paths.target(file, &self.cwds, false)?;
                    }
                }
                "-exec" | "-execdir" | "-ok" | "-okdir" => {
                    let after = &args[i + 1..];
                    let end = after
                        .iter()
                        .position(|w| matches!(w.text.as_str(), ";" | "+" | "\\;"))
                        .unwrap_or(after.len());
                    for stand_in in &found {
                        let command: Vec<Arg> = after[..end]
                            .iter()
                            .map(|w| {
                                if w.text.contains("{}") {
                                    stand_in.clone()
                                } else {
                                    w.clone()
                                }
                            })
                            .collect();
                        if !command.is_empty() {
                            self.command(command, &Simple::default())?;
                        }
                    }
                    i += end;
                }
                _ => {}
            }
            i += 1;
        }
        Ok(())
    }

    /// `cp`, `rsync`, `install`: a source lands as `DEST/NAME` when DEST is a directory, and
    /// `cp -a SRC/. DEST`, `rsync -a SRC/ DEST`, `cp -T` put the source's contents over
    /// whatever DEST holds.
    fn copy(&mut self, name: &str, rest: &[Arg]) -> Result<(), Reason> {
        let operands: Vec<&Arg> = rest.iter().filter(|a| !a.text.starts_with('-')).collect();
        let Some((dest, sources)) = operands.split_last() else {
            return Ok(());
        };
        let contents = sources
            .iter()
            .any(|s| s.text.ends_with("/.") || (name == "rsync" && s.text.ends_with('/')))
            || rest.iter().any(|a| {
                a.text == "--no-target-directory"
                    || (a.text.starts_with('-')
                        && !a.text.starts_with("--")
                        && a.text.contains('T'))
            });
        let Some(dir) = dest.value() else {
            return Ok(());
        };
        for cwd in self.cwds.known.clone() {
            if contents {
                self.paths.holds_guarded(dir, &cwd)?;
            }
            if cwd.join(dir).is_dir() {
                for source in sources {
                    let file = source
                        .text
                        .trim_end_matches('/')
                        .rsplit('/')
                        .next()
                        .unwrap_or_default();
                    if !file.is_empty() && file != "." {
                        self.paths.written(&format!("{dir}/{file}"), &cwd)?;
                    }
                }
            }
        }
        Ok(())
    }

    /// `ln [-s] TARGET… [LINK]`: a link to the git directory or a protected path lets later
    /// writes through it reach them unseen.
    fn link(&mut self, rest: &[Arg]) -> Result<(), Reason> {
        let operands: Vec<&Arg> = rest.iter().filter(|a| !a.text.starts_with('-')).collect();
        let sources = if operands.len() > 1 {
            &operands[..operands.len() - 1]
        } else {
            &operands[..]
        };
        // A symbolic link's target is read from the link's directory.
        let link_dir = match operands.as_slice() {
            [.., last] if operands.len() > 1 => last.value().map(|l| {
                if l.ends_with('/') {
                    l.to_string()
                } else {
                    l.rsplit_once('/')
                        .map(|(d, _)| d.to_string())
                        .unwrap_or_default()
                }
            }),
            _ => None,
        };
        for source in sources {
            let Some(path) = source.value() else {
                return Err(Reason::new(
                    Rule::Unknowable(Unknown::Target),
                    source.unknown.clone().unwrap_or_default(),
                ));
            };
            for cwd in self.cwds.known.clone() {
                let mut dirs = vec![cwd.clone()];
                if let Some(d) = &link_dir {
                    dirs.push(cwd.join(d));
                }
                for dir in dirs {
                    if self.paths.written(path, &dir).is_err()
                        || self.paths.holds_guarded(path, &dir).is_err()
                    {
                        return Err(Reason::new(Rule::Link, format!("ln … {path}")));
                    }
                }
            }
        }
        Ok(())
    }
}

/// The words' values joined by spaces, when every one is known.
fn known_text(args: &[Arg], what: &str) -> Result<String, Reason> {
    let mut out = Vec::with_capacity(args.len());
    for arg in args {
        match arg.value() {
            Some(v) => out.push(v),
            None => {
                return Err(Reason::new(
                    Rule::Unknowable(Unknown::Script),
                    arg.unknown
                        .clone()
                        .unwrap_or_else(|| format!("{what} {}", arg.text)),
                ));
            }
        }
    }
    if args.is_empty() {
        return Err(Reason::new(
            Rule::Unknowable(Unknown::Script),
            format!("{what} (no text given)"),
        ));
    }
    Ok(out.join(" "))
}

/// The backslash escapes `printf` and `echo -e` decode (`\x67`, `\147`, `\n`), decoded as
/// bash decodes `$'…'`: the text is judged as the shell that reads it will see it.
fn decode_escapes(text: &str) -> String {
    if !text.contains('\\') {
        return text.to_string();
    }
    let quoted = format!("$'{}'", text.replace('\'', "\\'"));
    shell::parse(&quoted)
        .ok()
        .and_then(|mut c| c.pop())
        .and_then(|s| s.words.first().and_then(Word::literal))
        .unwrap_or_else(|| text.to_string())
}
