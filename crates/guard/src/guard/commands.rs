//! What the commands a line runs do, once their words are resolved: the program and its
//! wrappers, the gates, git, shells and interpreters and the text they run, `find`, copies,
//! links, archives, and the files each known writer writes.

use super::policy::{Reason, Rule, Unknown, names_human_command};
use super::programs::{self, ShellInput, basename};
use super::words::{self, Arg};
use super::{Decision, Judged, Walk, check_patch, git_writes, writers};
use crate::shell::{self, Simple, Stdin, Word};

impl Walk<'_> {
    /// A program run with its arguments (after the words are resolved).
    pub(super) fn command(&mut self, args: Vec<Arg>, simple: &Simple) -> Result<(), Reason> {
        let args = self.unwrapped(&args, simple)?;
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
        self.gate_command(&args)?;
        let rest = &args[1..];
        if self.known_program(name, &args, simple)? == Judged::Fully {
            return Ok(());
        }
        if programs::SHELLS.contains(&name) || matches!(name, "source" | ".") {
            self.shell(name, rest, simple)?;
        } else if let Some(options) = programs::interpreter(name) {
            self.interpreter(name, options, rest, simple)?;
        } else if programs::AWKS.contains(&name) {
            self.awk(name, rest)?;
        }
        if programs::PTY_SPAWNERS.contains(&name) {
            self.pty_spawner(name, rest, simple)?;
        }
        // A hard link (`ln`, `cp -l`) or a symbolic one (`cp -s`) shares or points at its
        // source: later writes through it reach it.
        let links = matches!(name, "ln" | "link")
            || (name == "cp"
                && rest.iter().any(|a| {
                    matches!(a.text.as_str(), "--link" | "--symbolic-link")
                        || (a.text.starts_with('-')
                            && !a.text.starts_with("--")
                            && a.text.contains(['l', 's']))
                }));
        if links {
            self.link(rest)?;
        }
        if let Some(destination) = writers::unpacks(name, rest) {
            self.unpacked(&program, destination)?;
        }
        self.writes_and_copies(name, rest)
    }

    /// The command behind its wrappers (`env`, `nice`, `xargs`…), the variables they set
    /// judged, and for `xargs` the words it reads: what `find` finds, else unknowable.
    fn unwrapped(&mut self, args: &[Arg], simple: &Simple) -> Result<Vec<Arg>, Reason> {
        let unwrapped = programs::unwrap(args)?;
        for (name, value) in &unwrapped.assignments {
            self.variable(name, std::slice::from_ref(value))?;
        }
        let mut args = unwrapped.args;
        if unwrapped.from_stdin {
            // `find … | xargs CMD`: what find finds; anything else is unknowable.
            match &simple.stdin {
                Some(Stdin::Pipe(producer))
                    if producer.words.first().and_then(Word::literal).as_deref()
                        == Some("find") =>
                {
                    let found: Vec<Arg> = producer.words[1..]
                        .iter()
                        .flat_map(|w| self.resolve(w))
                        .collect();
                    args.extend(found_by(&found));
                }
                _ => args.push(Arg::unknowable("the arguments xargs reads")),
            }
        }
        Ok(args)
    }

    /// A command that runs a gate's command line, in any directory it may run in.
    fn gate_command(&self, args: &[Arg]) -> Result<(), Reason> {
        let Some(texts) = args
            .iter()
            .map(|a| a.value().map(str::to_string))
            .collect::<Option<Vec<String>>>()
        else {
            return Ok(());
        };
        for cwd in &self.cwds.known {
            if let Some(reason) = programs::gate_command(&texts, self.paths.ctx, cwd) {
                return Err(reason);
            }
        }
        Ok(())
    }

    /// The programs read by name: git, ourselves, the builtins that run text or rename
    /// programs, `find` and the patch appliers. [`Judged::Fully`] when nothing more about the
    /// command needs judging.
    fn known_program(
        &mut self,
        name: &str,
        args: &[Arg],
        simple: &Simple,
    ) -> Result<Judged, Reason> {
        let rest = &args[1..];
        match name {
            "git" => {
                self.git(rest, simple)?;
                if let Some(branch) = git_writes::switched_branch(args, &self.paths.ctx.main_branch)
                {
                    self.head = Some(branch);
                }
                return Ok(Judged::Fully);
            }
            "git-orchestrate" => programs::orchestrate(rest, self.paths.ctx.role)?,
            "eval" => {
                let text = known_text(rest, "eval")?;
                self.line(&text)?;
            }
            "trap" => {
                // `trap -- ACTION SIGNAL…`, `trap -p`: the action after the options.
                let action = rest
                    .iter()
                    .find(|a| !a.text.starts_with('-') || a.text == "-");
                if let Some(action) = action.filter(|a| a.text != "-") {
                    let text = known_text(std::slice::from_ref(action), "trap")?;
                    self.line(&text)?;
                }
            }
            "let" => {
                // Arithmetic runs the substitutions in an array subscript: `let 'a[$(…)]'`.
                for arg in rest {
                    if arg.text.contains("$(") || arg.text.contains('`') {
                        return Err(Reason::new(
                            Rule::Unknowable(Unknown::Script),
                            arg.text.clone(),
                        ));
                    }
                }
                return Ok(Judged::Partly);
            }
            // `hash -p /bin/rm cat` makes a reader's name run another program; `enable -f`
            // loads one; an alias renames.
            "hash" | "enable" | "alias"
                if rest
                    .iter()
                    .any(|a| a.text.starts_with('-') || a.text.contains('=')) =>
            {
                return Err(Reason::new(
                    Rule::Unknowable(Unknown::Program),
                    format!(
                        "{name} {}",
                        rest.iter()
                            .map(|a| a.text.as_str())
                            .collect::<Vec<_>>()
                            .join(" ")
                    ),
                ));
            }
            "find" => self.find(rest)?,
            "apply_patch" | "applypatch" => {
                let text = match rest.first() {
                    Some(patch) => known_text(std::slice::from_ref(patch), name)?,
                    None => self.stdin_text(simple, name)?.unwrap_or_default(),
                };
                if let Decision::Deny(reason) = check_patch(&text, self.paths.ctx) {
                    return Err(reason);
                }
            }
            "patch" => {
                self.patch(rest, simple)?;
                return Ok(Judged::Partly);
            }
            _ => return Ok(Judged::Partly),
        }
        Ok(Judged::Fully)
    }

    /// `patch [-d DIR] [-i FILE]`: the files the patch it reads would write.
    fn patch(&mut self, rest: &[Arg], simple: &Simple) -> Result<(), Reason> {
        let dir_arg = rest.iter().enumerate().find_map(|(at, a)| {
            if matches!(a.text.as_str(), "-d" | "--directory") {
                rest.get(at + 1).cloned()
            } else {
                a.text
                    .strip_prefix("--directory=")
                    .or_else(|| a.text.strip_prefix("-d").filter(|v| !v.is_empty()))
                    .map(|v| Arg {
                        text: v.to_string(),
                        ..a.clone()
                    })
            }
        });
        let dir_text = match &dir_arg {
            Some(d) => Some(
                d.value()
                    .ok_or_else(|| words::unknowable(d, Unknown::Target))?
                    .to_string(),
            ),
            None => None,
        };
        let dir = dir_text.as_deref();
        let input = rest
            .windows(2)
            .find(|w| matches!(w[0].text.as_str(), "-i" | "--input"))
            .map(|w| w[1].clone());
        match input {
            Some(file) => self.patch_files(std::slice::from_ref(&file), None, "patch", dir),
            None => {
                let stdin = self.stdin_text(simple, "patch")?;
                let from_file: Vec<Arg> =
                    simple.reads.iter().flat_map(|w| self.resolve(w)).collect();
                if from_file.is_empty() {
                    self.patch_files(&[], stdin.as_deref(), "patch", dir)
                } else {
                    self.patch_files(&from_file, None, "patch", dir)
                }
            }
        }
    }

    /// An interpreter (`python3 -c CODE`, `node` reading its stdin): the code it runs.
    fn interpreter(
        &mut self,
        name: &str,
        options: &[&str],
        rest: &[Arg],
        simple: &Simple,
    ) -> Result<(), Reason> {
        match programs::interpreter_code(options, rest) {
            Some(Some(at)) => {
                let code = known_text(
                    rest.get(at).map(std::slice::from_ref).unwrap_or_default(),
                    name,
                )?;
                self.program_text(&code)?;
                self.code_commands(name, &code)
            }
            Some(None) => match self.stdin_text(simple, name)? {
                Some(code) => {
                    self.program_text(&code)?;
                    self.code_commands(name, &code)
                }
                None => Ok(()),
            },
            None => Ok(()),
        }
    }

    /// An awk program given on the command line (not `-f FILE`): the commands it runs.
    fn awk(&mut self, name: &str, rest: &[Arg]) -> Result<(), Reason> {
        match programs::awk_program(rest).and_then(|at| rest[at].value()) {
            Some(code) => {
                let code = code.to_string();
                self.code_commands(name, &code)
            }
            // A program read from a file, or one the line does not show: as any argument.
            None => Ok(()),
        }
    }

    /// The commands an interpreter's literal code runs (`subprocess.run(["git", …])`,
    /// `system("git …")`), each judged as a line of its own. What those lines leave unread
    /// (a variable, a quote the shell would refuse) stays as unjudged as the code around it.
    fn code_commands(&mut self, name: &str, code: &str) -> Result<(), Reason> {
        let backticks_run = matches!(
            name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.'),
            "perl" | "ruby"
        );
        for line in super::code::commands(code, backticks_run) {
            match self.line(&line) {
                Err(reason) if !matches!(reason.rule, Rule::Unreadable | Rule::Unknowable(_)) => {
                    return Err(reason);
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// A program that gives what it runs a pseudo-terminal (`script`, `expect`): a human's
    /// command run through it, and the command line it runs.
    fn pty_spawner(&mut self, name: &str, rest: &[Arg], simple: &Simple) -> Result<(), Reason> {
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
        Ok(())
    }

    /// An archive unpacked into `destination` (the working directory when none is named):
    /// refused when that may hold what the guard protects.
    fn unpacked(&mut self, program: &str, destination: Option<Arg>) -> Result<(), Reason> {
        let dest = destination.unwrap_or_else(|| Arg::known("."));
        let Some(dir) = dest.value() else {
            return Err(Reason::new(Rule::Archive, program));
        };
        let refused = || Reason::new(Rule::Archive, format!("{program} … (into {dir})"));
        for cwd in self.cwds.known.clone() {
            if self.paths.holds_guarded(dir, &cwd).is_err()
                || self.paths.written(&format!("{dir}/x"), &cwd).is_err()
            {
                return Err(refused());
            }
        }
        if self.cwds.unknown && !dir.starts_with('/') {
            return Err(refused());
        }
        Ok(())
    }

    /// The files a known writer writes, what a copy copies, and the program text in its
    /// arguments.
    fn writes_and_copies(&mut self, name: &str, rest: &[Arg]) -> Result<(), Reason> {
        let written = writers::written(name, rest);
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
        if let Some(reason) = self.paths.mentions_internals(text) {
            return Err(reason);
        }
        if let Some(marker) = super::policy::PTY_MARKERS
            .iter()
            .find(|m| text.contains(**m))
        {
            return Err(Reason::new(
                Rule::HumanOnly,
                format!("a pseudo-terminal spawned in program text ({marker})"),
            ));
        }
        if let Some(command) = names_human_command(text) {
            return Err(Reason::new(Rule::HumanOnly, command));
        }
        if let Some(reason) = super::policy::names_role_change(text, self.paths.ctx.role) {
            return Err(reason);
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
    pub(super) fn stdin_text(
        &mut self,
        simple: &Simple,
        reader: &str,
    ) -> Result<Option<String>, Reason> {
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
                        let texts: Vec<String> = args[1..]
                            .iter()
                            .map(|a| a.value().map(str::to_string))
                            .collect::<Option<Vec<_>>>()
                            .ok_or_else(|| {
                                Reason::new(
                                    Rule::Unknowable(Unknown::Script),
                                    format!("what `{program}` prints into `{reader}`"),
                                )
                            })?;
                        // `echo -e` and `printf %b` read `\0NNN` as octal NNN and stop all
                        // output at `\c`, which `$'…'` (the decoder here) reads otherwise:
                        // such text is not judged.
                        if texts.iter().any(|t| t.contains("\\0") || t.contains("\\c")) {
                            return unknowable(program);
                        }
                        match printed(basename(program), &texts) {
                            Some(text) => Ok(Some(text)),
                            None => unknowable(program),
                        }
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
        let found = found_by(args);
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

/// What `find ARGS` finds, as `{}` stands for it: anything under its starts whose name (or
/// path, with `-path`) matches, as a pattern the guard cannot know exactly.
fn found_by(args: &[Arg]) -> Vec<Arg> {
    let starts: Vec<&Arg> = args
        .iter()
        .take_while(|a| !a.text.starts_with('-') && !matches!(a.text.as_str(), "(" | "!" | "\\("))
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
    match by_path {
        Some(arg) => vec![arg],
        None => found,
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

/// What `echo` or `printf` print: `echo`'s options left out, `printf`'s format filled with
/// its arguments (again while arguments are left), escapes decoded.
fn printed(program: &str, args: &[String]) -> Option<String> {
    if program == "echo" {
        let words: Vec<&str> = args
            .iter()
            .map(String::as_str)
            .skip_while(|a| {
                a.len() > 1 && a.starts_with('-') && a[1..].chars().all(|c| "neE".contains(c))
            })
            .collect();
        return decode_escapes(&words.join(" "));
    }
    let Some((format, mut rest)) = args.split_first() else {
        return Some(String::new());
    };
    let mut out = String::new();
    loop {
        let mut chars = format.chars().peekable();
        let mut used = false;
        while let Some(c) = chars.next() {
            if c != '%' {
                out.push(c);
                continue;
            }
            // A directive: flags and width, then its letter.
            while chars.peek().is_some_and(|c| "-+ #0123456789.".contains(*c)) {
                chars.next();
            }
            match chars.next() {
                Some('%') => out.push('%'),
                Some(_) => {
                    used = true;
                    if let Some((first, others)) = rest.split_first() {
                        out.push_str(first);
                        rest = others;
                    }
                }
                None => {}
            }
        }
        if rest.is_empty() || !used {
            break;
        }
    }
    decode_escapes(&out)
}

/// The backslash escapes `printf` and `echo -e` decode (`\x67`, `\147`, `\n`), decoded as
/// bash decodes `$'…'`: the text is judged as the shell that reads it will see it. `None`
/// when that reading is not one word (a `\'` in the text ends the quote early, and the rest
/// would be read as more of the line): then the text is not judged.
fn decode_escapes(text: &str) -> Option<String> {
    if !text.contains('\\') {
        return Some(text.to_string());
    }
    let quoted = format!("$'{}'", text.replace('\'', "\\'"));
    let mut commands = shell::parse(&quoted).ok()?;
    let command = commands.pop()?;
    if !commands.is_empty() || command.words.len() != 1 || !command.assignments.is_empty() {
        return None;
    }
    command.words.first().and_then(Word::literal)
}
