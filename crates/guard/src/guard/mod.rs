//! The pre-tool-use guard: decides whether an agent's shell command or file write could
//! reach the hooks, the orchestrator's refs and state, the main branch, a protected path or a
//! human's answer, and names the legal route when it could. It judges by a model of reach:
//! each word is known, a glob, or unknowable, and a command whose program, script or written
//! path it cannot know, where that could reach something protected, is refused. The
//! orchestrator never relies on it alone (docs/agent-guide.md, "The guard and its limits").

mod code;
mod commands;
mod context;
mod git;
mod git_options;
mod git_writes;
mod patch;
mod paths;
pub mod policy;
mod programs;
mod protected;
mod words;
mod writers;

#[cfg(test)]
mod tests;
mod walk;

pub use crate::glob::glob_match;
pub use context::GuardContext;
pub use patch::read_capped;
pub use policy::{Reason, Rule};

use crate::shell::{self, Joint, Simple, Word};
use paths::Checker;
use policy::{COMMAND_VARIABLES, Unknown, risky_setting, risky_variable};
use walk::Walk;
use words::{Arg, Known};

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    Allow,
    Deny(Reason),
}

/// More simple commands than this in one call is refused rather than followed.
const MAX_COMMANDS: usize = 200_000;
/// Bytes of lines read in one call, the nested ones (`eval "$x"` again and again) included.
const MAX_READ: usize = 24 * 1024 * 1024;
/// Bytes of words expanded in one call.
const MAX_EXPANDED: usize = 16 * 1024 * 1024;
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

impl Walk<'_> {
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
        self.read += text.len();
        if self.read > MAX_READ {
            return Err(Reason::new(
                Rule::TooMuch,
                "the text it runs, read again and again",
            ));
        }
        if self.commands > MAX_COMMANDS {
            return Err(Reason::new(
                Rule::TooMuch,
                format!("{} commands", self.commands),
            ));
        }
        // A `cd` in a loop's body moves the commands before it on the next pass: where a
        // loop and a `cd` meet, the directory may be any.
        let loops = commands.iter().any(|c| {
            matches!(
                c.words.first().and_then(Word::literal).as_deref(),
                Some("for" | "select")
            )
        }) || text.contains("while")
            || text.contains("until");
        let moves = commands.iter().any(|c| {
            c.words.iter().take(3).any(|w| {
                matches!(
                    w.literal().as_deref(),
                    Some("cd" | "pushd" | "popd" | "chdir")
                )
            })
        });
        if loops && moves {
            self.cwds.unknown = true;
        }
        self.depth += 1;
        for (at, simple) in commands.iter().enumerate() {
            // A `cd` the next command depends on (`cd x && …`) is where that one runs; one in a
            // pipeline runs in a subshell and changes nothing.
            let next = commands[at + 1..]
                .iter()
                .find(|c| !c.nested || simple.nested);
            let then_and = next.is_some_and(|c| c.joint == Joint::And);
            let piped = simple.joint == Joint::Pipe || next.is_some_and(|c| c.joint == Joint::Pipe);
            let result = self.simple(simple, then_and && !piped && !simple.nested);
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
        // Past so many bytes expanded in one call, what is left is unknowable: a line of
        // `$x $x …` with a long `x` costs no more than its text.
        if self.expanded.get() > MAX_EXPANDED
            && word
                .parts
                .iter()
                .any(|p| !matches!(p, shell::Part::Text { .. }))
        {
            let shown: String = word.raw.chars().take(64).collect();
            return vec![Arg::unknowable(shown)];
        }
        let args = self.vars.resolve(word, &self.known());
        let bytes: usize = args.iter().map(|a| a.text.len()).sum();
        self.expanded.set(self.expanded.get() + bytes);
        args
    }

    fn simple(&mut self, simple: &Simple, cd_certain: bool) -> Result<(), Reason> {
        self.assignments(simple)?;
        for target in &simple.writes {
            for arg in self.resolve(target) {
                self.paths.target(&arg, &self.cwds, false)?;
            }
        }
        let mut words: &[Word] = &simple.words;
        match words.first().and_then(Word::literal).as_deref() {
            Some("for" | "select") => return self.for_loop(words),
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
        let words = without_prefixes(words);
        runs_evaluated_text(simple, words)?;
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
        if self.builtin(&program[0].text, words, simple, cd_certain)? == Judged::Fully {
            return Ok(());
        }
        let mut args = program;
        for word in &words[1..] {
            args.extend(self.resolve(word));
        }
        self.command(args, simple)
    }

    /// The assignments before a command: judged, and kept when no command follows them
    /// (`X=1 cmd` sets X for cmd alone).
    fn assignments(&mut self, simple: &Simple) -> Result<(), Reason> {
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
        Ok(())
    }

    /// `for NAME in WORDS…` (or `select`): the variable the body sees.
    fn for_loop(&mut self, words: &[Word]) -> Result<(), Reason> {
        if let Some(name) = words.get(1).and_then(Word::literal) {
            let list: Vec<Arg> = match words.get(2).and_then(Word::literal).as_deref() {
                Some("in") => words[3..].iter().flat_map(|w| self.resolve(w)).collect(),
                _ => vec![Arg::unknowable(format!("${name}"))],
            };
            self.variable(&name, &list)?;
            let nonempty = !list.is_empty();
            // The body runs only with the variable set to one of the list's words.
            self.vars.assign(&name, list, nonempty);
        }
        Ok(())
    }

    /// The shell's own commands that set variables or move the directory:
    /// [`Judged::Fully`]; [`Judged::Partly`] for any other program.
    fn builtin(
        &mut self,
        program: &str,
        words: &[Word],
        simple: &Simple,
        cd_certain: bool,
    ) -> Result<Judged, Reason> {
        let certain = !simple.nested && simple.joint == Joint::Seq;
        match program {
            "export" | "declare" | "typeset" | "readonly" | "local" => {
                self.declare(&words[1..], certain)?
            }
            "read" | "mapfile" | "readarray" | "getopts" => self.read(program, &words[1..])?,
            "printf" if words.get(1).and_then(Word::literal).as_deref() == Some("-v") => {
                if let Some(name) = words.get(2) {
                    let name = name.literal().unwrap_or_else(|| name.text());
                    self.set_unknown(&name)?;
                }
            }
            "unset" => {
                for word in &words[1..] {
                    if let Some(name) = word.literal().filter(|n| !n.starts_with('-')) {
                        // The role unset falls back to `[agent] role`, or to none.
                        if name == crate::product::ROLE_ENV {
                            return Err(Reason::new(Rule::Variable(policy::Variable::Role), name));
                        }
                        self.vars.assign(&name, vec![Arg::known("")], certain);
                    }
                }
            }
            "cd" | "pushd" | "chdir" => self.cd(&words[1..], cd_certain),
            "popd" => self.cwds.change(None, false),
            _ => return Ok(Judged::Partly),
        }
        Ok(Judged::Fully)
    }

    /// `export`, `declare`, `typeset`, `readonly`, `local` and their arguments.
    fn declare(&mut self, args: &[Word], certain: bool) -> Result<(), Reason> {
        for word in args {
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
                // `export -n NAME`, `declare +x NAME`: no agent's command needs to touch the
                // role it was started in.
                if name == crate::product::ROLE_ENV {
                    return Err(Reason::new(Rule::Variable(policy::Variable::Role), name));
                }
            } else {
                return Err(Reason::new(Rule::Unknowable(Unknown::Program), word.text()));
            }
        }
        Ok(())
    }

    /// `read`, `mapfile`, `readarray`, `getopts`: the variables they set from what the guard
    /// cannot see, and `mapfile -C`'s callback.
    fn read(&mut self, program: &str, words: &[Word]) -> Result<(), Reason> {
        let args: Vec<Arg> = words.iter().flat_map(|w| self.resolve(w)).collect();
        // `mapfile -C CALLBACK` runs code for each line.
        if let Some(at) = args.iter().position(|a| a.text == "-C") {
            match args.get(at + 1).and_then(Arg::value) {
                Some(callback) => self.line(callback)?,
                None => {
                    return Err(Reason::new(Rule::Unknowable(Unknown::Script), "mapfile -C"));
                }
            }
        }
        let mut i = 0;
        while i < args.len() {
            let text = args[i].text.as_str();
            if text.starts_with('-') {
                // Options that take a value (`-p PROMPT`, `-d DELIM`…), `-a NAME` names.
                if matches!(
                    text,
                    "-p" | "-d" | "-n" | "-N" | "-t" | "-u" | "-i" | "-C" | "-c" | "-O" | "-s"
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
        Ok(())
    }

    /// `cd`, `pushd`, `chdir`: where the next commands run.
    fn cd(&mut self, args: &[Word], cd_certain: bool) {
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
        let operand = args.iter().find(|w| !is_option(&w.raw));
        let dir: Option<String> = match operand {
            None => self.home.clone(),
            Some(w) if w.raw == "-" => None,
            Some(w) => match self.resolve(w).as_slice() {
                [one] => one.value().map(str::to_string),
                _ => None,
            },
        };
        self.cwds.change(dir.as_deref(), cd_certain);
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
        // `GIT_TRACE=/path` appends to that file.
        if name.starts_with("GIT_TRACE") {
            for value in values {
                if value.text.starts_with('/') || !value.is_known() {
                    self.paths.target(value, &self.cwds, false)?;
                }
            }
        }
        // Prompts are expanded as the shell shows them (`set -x` shows PS4): their
        // substitutions run.
        if matches!(name, "PS0" | "PS1" | "PS2" | "PS3" | "PS4") {
            for value in values {
                let text = value.value().ok_or_else(|| {
                    Reason::new(
                        Rule::Unknowable(Unknown::Script),
                        value.unknown.clone().unwrap_or_default(),
                    )
                })?;
                if text.contains("$(") || text.contains('`') {
                    return Err(Reason::new(
                        Rule::Unknowable(Unknown::Script),
                        format!("{name}={text}"),
                    ));
                }
            }
        }
        if COMMAND_VARIABLES.contains(&name) || name == "PROMPT_COMMAND" {
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
}

/// How much of a command a step judged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Judged {
    /// Everything: the command is allowed.
    Fully,
    /// What its name says; the checks every program gets remain.
    Partly,
}

/// The command behind `builtin cd x`, `command export X=1`, `time cd x`, `coproc NAME { …`.
fn without_prefixes(mut words: &[Word]) -> &[Word] {
    while words.len() > 1 {
        match words[0].literal().as_deref() {
            Some("builtin" | "command" | "time" | "!" | "coproc" | "nohup" | "exec" | "{")
                if !words[1].raw.starts_with('-') || words[1].raw == "-p" =>
            {
                let coproc = words[0].raw == "coproc";
                words = &words[1..];
                if words[0].raw == "-p" {
                    words = &words[1..];
                }
                // `coproc NAME { …`: the name, then the group.
                if coproc && words.len() > 1 && words[1].raw == "{" {
                    words = &words[1..];
                }
            }
            _ => break,
        }
    }
    words
}

/// Text the shell evaluates that hides substitutions: `${x@P}` expands `x` as a prompt,
/// running the substitutions in its value; an array subscript is arithmetic, and arithmetic
/// runs the substitutions in it (`let 'a[$(…)]'`, `declare -i n; n='a[$(…)]'`,
/// `test -v 'a[$(…)]'`).
fn runs_evaluated_text(simple: &Simple, words: &[Word]) -> Result<(), Reason> {
    if words.iter().chain(&simple.assignments).any(|w| {
        w.parts
            .iter()
            .any(|p| matches!(p, shell::Part::Opaque { text } if text.contains("@P")))
    }) {
        return Err(Reason::new(
            Rule::Unknowable(Unknown::Script),
            "a ${…@P} expansion",
        ));
    }
    let first = words.first().and_then(Word::literal);
    let evaluates = matches!(
        first.as_deref(),
        Some(
            "let"
                | "[["
                | "["
                | "test"
                | "declare"
                | "typeset"
                | "local"
                | "export"
                | "readonly"
                | "unset"
                | "read"
                | "mapfile"
                | "readarray"
        )
    ) || (first.as_deref() == Some("printf")
        && words.get(1).and_then(Word::literal).as_deref() == Some("-v"));
    // A `[` whose subscript, up to its `]`, holds a substitution.
    let subscripted = |w: &Word| {
        let text = w.text();
        text.match_indices('[').any(|(at, _)| {
            let inside = &text[at + 1..];
            let inside = inside.split(']').next().unwrap_or(inside);
            inside.contains("$(") || inside.contains('`')
        })
    };
    if let Some(word) = simple
        .assignments
        .iter()
        .chain(words.iter().filter(|_| evaluates))
        .find(|w| subscripted(w))
    {
        return Err(Reason::new(Rule::Unknowable(Unknown::Script), word.text()));
    }
    Ok(())
}
