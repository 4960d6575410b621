//! `git orchestrate man`: the manual page. Its synopsis, commands and options are generated
//! from the command line's own definition (each command's `--help`), so they cannot drift
//! from it; the prose around them (description, exit status, files, environment, examples)
//! is written by hand in docs/man/. `--install` puts the page where `man` finds it, and so
//! where `git orchestrate --help` (which git turns into `man git-orchestrate`) opens it.

use std::path::{Path, PathBuf};

use clap::{Arg, Args, Command};

use super::error::CommandError;
use super::{ErrorKind, Exit, Failure, Ui};

/// Print the manual page (roff), or install it where `man` finds it
///
/// The page is generated from the commands' own help around hand-written sections. `git
/// orchestrate --help` is `man git-orchestrate` to git: `--install` writes the page into
/// `share/man/man1` beside the directory this program is in (`~/.cargo/share/man/man1` after
/// `cargo install`), which man-db searches for every `bin` directory on PATH.
#[derive(Debug, Args)]
pub struct ManArgs {
    /// Write the page into `share/man/man1/git-orchestrate.1` beside this program's directory
    /// (or into --dir) and say where, instead of printing it.
    #[arg(long)]
    pub install: bool,
    /// With --install: the manual directory to write into (`DIR/man1/git-orchestrate.1`).
    #[arg(long, value_name = "DIR", requires = "install")]
    pub dir: Option<PathBuf>,
}

/// `cli` is the program's whole command line, as clap defines it in `cli/mod.rs`.
pub fn run(args: &ManArgs, cli: clap::Command, ui: &mut Ui) -> Result<Exit, Failure> {
    if !args.install {
        ui.text(&page(cli))?;
        return Ok(Exit::Success);
    }
    let dir = match &args.dir {
        Some(dir) => dir.clone(),
        None => default_dir().ok_or_else(|| {
            Failure::from(CommandError::new(
                ErrorKind::Io,
                "cannot tell where this program is, so not where its manual page goes",
            ))
        })?,
    };
    let path = install(&dir, cli).map_err(|e| {
        Failure::from(CommandError::new(
            ErrorKind::Io,
            format!(
                "could not install the manual page into {}: {e}",
                dir.display()
            ),
        ))
    })?;
    ui.text(&format!(
        "installed the manual page: {} (`man git-orchestrate`, `git orchestrate --help`)\n",
        path.display()
    ))?;
    Ok(Exit::Success)
}

/// `share/man` beside the directory this program is in: where man-db looks for the pages of
/// the programs of each PATH entry (`~/.cargo/bin` → `~/.cargo/share/man`).
pub fn default_dir() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    Some(exe.parent()?.parent()?.join("share/man"))
}

/// Writes the page into `dir/man1/`, unless it holds this very page already; its path.
pub fn install(dir: &Path, cli: clap::Command) -> std::io::Result<PathBuf> {
    let man1 = dir.join("man1");
    let path = man1.join("git-orchestrate.1");
    let text = page(cli);
    if std::fs::read(&path).is_ok_and(|old| old == text.as_bytes()) {
        return Ok(path);
    }
    std::fs::create_dir_all(&man1)?;
    // Whole or not at all: a reader never sees half a page.
    let tmp = man1.join(format!(".git-orchestrate.1.{}", std::process::id()));
    std::fs::write(&tmp, &text)?;
    std::fs::rename(&tmp, &path)?;
    Ok(path)
}

/// The whole page.
pub fn page(mut cli: clap::Command) -> String {
    // The subcommands' arguments are deferred (built when one runs): all of them, here.
    cli.build();
    let mut out = format!(
        ".TH GIT\\-ORCHESTRATE 1 \"\" \"git\\-orchestrate {}\" \"git\\-orchestrate Manual\"\n.nh\n",
        escape(env!("CARGO_PKG_VERSION"))
    );
    let head = include_str!("../../docs/man/head.roff");
    // NAME, then the synopsis, then the rest of the hand-written head (DESCRIPTION).
    let (name, description) = head.split_at(head.find(".SH DESCRIPTION").unwrap_or(0));
    out.push_str(name);
    out.push_str(".SH SYNOPSIS\n");
    for command in commands(&cli) {
        out.push_str(&format!("{}\n.br\n", synopsis(command)));
    }
    out.push_str(description);
    out.push_str(".SH COMMANDS\n");
    for command in commands(&cli) {
        out.push_str(&entry(command));
    }
    out.push_str(".SH GLOBAL OPTIONS\n");
    for arg in cli.get_arguments().filter(|a| !a.is_hide_set()) {
        out.push_str(&option(arg));
    }
    out.push_str(include_str!("../../docs/man/tail.roff"));
    out
}

/// Every command a person can run, nested ones (`hooks install`) after their parent.
fn commands(cli: &Command) -> Vec<&Command> {
    fn walk<'a>(command: &'a Command, out: &mut Vec<&'a Command>) {
        for sub in command
            .get_subcommands()
            .filter(|s| !s.is_hide_set() && s.get_name() != "help")
        {
            out.push(sub);
            walk(sub, out);
        }
    }
    let mut out = Vec::new();
    walk(cli, &mut out);
    out
}

/// `git orchestrate NAME…` and its usage, as `-h` prints it.
fn synopsis(command: &Command) -> String {
    let usage = command.clone().render_usage().to_string();
    let usage = usage.trim().trim_start_matches("Usage:").trim();
    let name = command.get_bin_name().unwrap_or(command.get_name());
    let rest = usage.strip_prefix(name).unwrap_or(usage).trim();
    format!(".B {}\n{}", escape(name), escape(rest))
}

/// A command's entry under COMMANDS: its synopsis, its help, its own options.
fn entry(command: &Command) -> String {
    let name = command.get_bin_name().unwrap_or(command.get_name());
    let mut out = format!(".SS \"{}\"\n{}\n", escape(name), synopsis(command));
    let help = command
        .get_long_about()
        .or(command.get_about())
        .map(ToString::to_string)
        .unwrap_or_default();
    for paragraph in help.split("\n\n").filter(|p| !p.trim().is_empty()) {
        out.push_str(".PP\n");
        out.push_str(&text(paragraph));
    }
    let own: Vec<&Arg> = command
        .get_arguments()
        .filter(|a| !a.is_hide_set() && !a.is_global_set())
        .filter(|a| !matches!(a.get_id().as_str(), "help" | "version"))
        .collect();
    for arg in own {
        out.push_str(&option(arg));
    }
    out
}

/// One option or argument: `.TP`, its form, its help, its values and default.
fn option(arg: &Arg) -> String {
    let values: Vec<String> = arg
        .get_value_names()
        .map(|names| {
            names
                .iter()
                .map(|n| format!("\\fI{}\\fR", escape(n)))
                .collect()
        })
        .unwrap_or_default();
    let mut forms = Vec::new();
    if let Some(short) = arg.get_short() {
        forms.push(format!("\\fB\\-{}\\fR", escape(&short.to_string())));
    }
    if let Some(long) = arg.get_long() {
        forms.push(format!("\\fB\\-\\-{}\\fR", escape(long)));
    }
    let takes = arg.get_action().takes_values();
    let form = if arg.is_positional() {
        values.join(" ")
    } else if takes && !values.is_empty() {
        format!("{} {}", forms.join(", "), values.join(" "))
    } else {
        forms.join(", ")
    };
    let mut out = format!(".TP\n{form}\n");
    let help = arg
        .get_long_help()
        .or(arg.get_help())
        .map(ToString::to_string)
        .unwrap_or_default();
    out.push_str(&text(&help));
    let possible: Vec<String> = arg
        .get_possible_values()
        .iter()
        .filter(|v| !v.is_hide_set())
        .map(|v| v.get_name().to_string())
        .collect();
    if (takes || arg.is_positional()) && !possible.is_empty() {
        out.push_str(&format!(
            ".br\n{}",
            text(&format!("One of: {}.", possible.join(", ")))
        ));
    }
    let defaults: Vec<String> = arg
        .get_default_values()
        .iter()
        .map(|v| v.to_string_lossy().into_owned())
        .collect();
    if takes && !defaults.is_empty() && !defaults.iter().all(String::is_empty) {
        out.push_str(&format!(
            ".br\n{}",
            text(&format!("Default: {}.", defaults.join(", ")))
        ));
    }
    out
}

/// Help text as roff lines: each line escaped, a blank line a new paragraph.
fn text(help: &str) -> String {
    let mut out = String::new();
    for line in help.lines() {
        if line.trim().is_empty() {
            out.push_str(".IP\n");
        } else {
            out.push_str(&escape(line.trim_end()));
            out.push('\n');
        }
    }
    out
}

/// `text` safe in roff: backslashes and hyphens escaped, and a line that starts with `.` or
/// `'` kept from being read as a request.
fn escape(text: &str) -> String {
    let escaped = text.replace('\\', "\\e").replace('-', "\\-");
    if escaped.starts_with(['.', '\'']) {
        format!("\\&{escaped}")
    } else {
        escaped
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_escaped_for_roff() {
        assert_eq!(escape(".hidden -x \\n"), "\\&.hidden \\-x \\en");
        assert_eq!(text("a\n\nb\n"), "a\n.IP\nb\n");
    }
}
