//! `git orchestrate completions SHELL`: the shell's completion script, generated from the
//! command line's own definition (clap_complete) so that it cannot drift from it, with what
//! git's own completion needs to complete `git orchestrate <TAB>`.

use clap::{Args, ValueEnum};

use super::{Exit, Failure, Ui};

/// Print a shell completion script for git orchestrate
///
/// bash: `git orchestrate completions bash > ~/.local/share/bash-completion/completions/git-orchestrate`
/// (or source it from ~/.bashrc); with git's own bash completion loaded, `git orchestrate
/// <TAB>` completes too (the script defines the `_git_orchestrate` function git's completion
/// calls). zsh: `git orchestrate completions zsh > ~/.zfunc/_git-orchestrate` with ~/.zfunc in
/// fpath, before compinit; zsh's git completion calls `_git-orchestrate`. fish: `git
/// orchestrate completions fish > ~/.config/fish/completions/git-orchestrate.fish`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to complete in.
    #[arg(value_enum)]
    pub shell: ShellArg,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum ShellArg {
    Bash,
    Zsh,
    Fish,
}

/// git's bash completion (git-completion.bash) completes `git orchestrate …` by calling
/// `_git_orchestrate` with its own `words`/`cword` (and `__git_cmd_idx`, the subcommand's
/// index, where `git -C DIR` comes before it): they are turned into the command line the
/// generated function (`GENERATED`, the one its `complete -F` names) reads.
const GIT_BASH: &str = r#"
# `git orchestrate <TAB>`, through git's own bash completion.
_git_orchestrate() {
    local at=${__git_cmd_idx:-1}
    local COMP_WORDS=(git-orchestrate "${words[@]:at+1}")
    local COMP_CWORD=$((cword - at))
    local COMP_LINE="${COMP_WORDS[*]}"
    local COMP_POINT=${#COMP_LINE}
    GENERATED git-orchestrate "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
}
"#;

/// `command` is the program's whole command line, as clap defines it in `cli/mod.rs`.
pub fn run(
    args: &CompletionsArgs,
    mut command: clap::Command,
    ui: &mut Ui,
) -> Result<Exit, Failure> {
    // The subcommands' arguments are deferred (built when one runs): all of them, here.
    command.build();
    // Completed as the program git runs (`git-orchestrate`), not as `git orchestrate`: every
    // subcommand's name in the script derives from it.
    name_as(&mut command, "git-orchestrate");
    let mut out = Vec::new();
    let shell = match args.shell {
        ShellArg::Bash => clap_complete::Shell::Bash,
        ShellArg::Zsh => clap_complete::Shell::Zsh,
        ShellArg::Fish => clap_complete::Shell::Fish,
    };
    clap_complete::generate(shell, &mut command, "git-orchestrate", &mut out);
    let mut text = String::from_utf8_lossy(&out).into_owned();
    if matches!(args.shell, ShellArg::Bash) {
        // clap_complete 4.6 names a subcommand's case two ways when the program's name holds a
        // `-` (`git__orchestrate__subcmd__run` where it is chosen, `git__subcmd__orchestrate__…`
        // where it is handled), so no subcommand's options would complete: made one name.
        text = text.replace("git__subcmd__orchestrate", "git__orchestrate");
        let generated = text
            .split("complete -F ")
            .nth(1)
            .and_then(|rest| rest.split_whitespace().next())
            .unwrap_or("_git__orchestrate")
            .to_string();
        text.push_str(&GIT_BASH.replace("GENERATED", &generated));
    }
    ui.text(&text)?;
    Ok(Exit::Success)
}

/// `command` and its subcommands, named as run by the program `bin`.
fn name_as(command: &mut clap::Command, bin: &str) {
    command.set_bin_name(bin);
    for sub in command.get_subcommands_mut() {
        let name = format!("{bin} {}", sub.get_name());
        name_as(sub, &name);
    }
}
