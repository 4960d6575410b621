//! The hot path's command lines (`get-task`, `status`, `submit-work --test-command`,
//! `agent-hook`, `--version` alone) and the bare `board` a person repeats, read without
//! building clap's command tree.
//!
//! clap builds every argument of the command it parses, and the subcommand's in full, before
//! it reads one: about 280,000 instructions a call, a sixth of a whole `get-task` (measured
//! with callgrind; docs/architecture.md, "What each call reads"). The lines an agent's loop
//! repeats have a few shapes; this reads those and gives up on anything else, which clap then
//! reads as before, errors and help included. A line read here is read as clap reads it:
//! `tests` compares the two on every line the alphabet below can make.

use std::ffi::OsString;

use super::agent_hook::{AgentHookArgs, ClientArg, EventArg};
use super::board::BoardArgs;
use super::get_task::GetTaskArgs;
use super::status::StatusArgs;
use super::submit_work::SubmitWorkArgs;
use super::{Cli, Command};

/// `args` (without the program's name) as clap would read them, when they have one of the
/// hot path's shapes; `None` for anything else. `env_workflow` is the workflow variable's
/// value, which clap reads for `--workflow` when it is not given.
pub fn parse(args: &[OsString], env_workflow: Option<OsString>) -> Option<Cli> {
    let mut words = Vec::with_capacity(args.len());
    for arg in args {
        words.push(arg.to_str()?);
    }
    let mut json = false;
    let mut quiet = false;
    let mut workflow: Option<String> = None;
    let mut command: Option<&str> = None;
    let mut positional: Vec<&str> = Vec::new();
    let mut summary: Option<String> = None;
    let mut test_command: Option<String> = None;
    let mut i = 0;
    while i < words.len() {
        let word = words[i];
        i += 1;
        match word {
            "--json" => once_flag(&mut json)?,
            "-q" | "--quiet" => once_flag(&mut quiet)?,
            _ if word.starts_with('-') => {
                let (name, inline) = match word.split_once('=') {
                    Some((name, value)) => (name, Some(value)),
                    None => (word, None),
                };
                let slot = match name {
                    "--workflow" => &mut workflow,
                    "-s" | "--summary" if command == Some("submit-work") && inline.is_none() => {
                        &mut summary
                    }
                    "--summary" if command == Some("submit-work") => &mut summary,
                    "--test-command" if command == Some("submit-work") => &mut test_command,
                    _ => return None,
                };
                let value = match inline {
                    // clap takes what follows `=` as it is; an empty one is left to it.
                    Some(value) if !value.is_empty() => value,
                    Some(_) => return None,
                    None => {
                        let value = *words.get(i)?;
                        i += 1;
                        // A value that looks like an option is clap's to judge.
                        if value.is_empty() || value.starts_with('-') {
                            return None;
                        }
                        value
                    }
                };
                if slot.replace(value.to_string()).is_some() {
                    return None;
                }
            }
            _ if command.is_none() => command = Some(word),
            _ => positional.push(word),
        }
    }
    let command = match (command?, positional.as_slice()) {
        ("get-task", []) => Command::GetTask(GetTaskArgs { role: None }),
        ("status", []) => Command::Status(StatusArgs {}),
        ("board", []) => Command::Board(BoardArgs {
            remote: None,
            all: false,
            serve: false,
            port: 0,
            bind: None,
            timeline: None,
        }),
        ("submit-work", []) => Command::SubmitWork(SubmitWorkArgs {
            summary: summary.take()?,
            test_command: Some(test_command.take()?),
            expectation: None,
            analysis_decision: None,
            plan: None,
            no_pr_left: false,
            squash: false,
            mark_done: false,
            contradiction: None,
        }),
        ("agent-hook", [client, event]) => Command::AgentHook(AgentHookArgs {
            client: match *client {
                "claude" => ClientArg::Claude,
                "codex" => ClientArg::Codex,
                "gemini" => ClientArg::Gemini,
                _ => return None,
            },
            event: match *event {
                "session-start" => EventArg::SessionStart,
                "pre-tool-use" => EventArg::PreToolUse,
                "stop" => EventArg::Stop,
                _ => return None,
            },
        }),
        _ => return None,
    };
    if summary.is_some() || test_command.is_some() {
        return None;
    }
    let workflow = match workflow {
        Some(given) => Some(given),
        None => match env_workflow {
            Some(value) => Some(value.into_string().ok()?),
            None => None,
        },
    };
    Some(Cli {
        workflow,
        json,
        quiet,
        command,
    })
}

/// What `--version` (or `-V`) alone prints, as clap prints it (`tests` compares the two):
/// the command's name and this release's number. The only call that needs nothing else.
pub fn version(args: &[OsString]) -> Option<String> {
    match args {
        [only] if only == "--version" || only == "-V" => {
            Some(format!("git-orchestrate {}\n", env!("CARGO_PKG_VERSION")))
        }
        _ => None,
    }
}

/// A flag clap takes once: a second one is its error to give.
fn once_flag(flag: &mut bool) -> Option<()> {
    if *flag {
        return None;
    }
    *flag = true;
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser as _;
    use proptest::prelude::*;

    fn words(line: &[&str]) -> Vec<OsString> {
        line.iter().map(OsString::from).collect()
    }

    /// clap's reading of `line`, rendered, or `None` where clap refuses it.
    fn clap_reads(line: &[&str]) -> Option<String> {
        let argv = std::iter::once("git-orchestrate").chain(line.iter().copied());
        Cli::try_parse_from(argv).ok().map(|cli| format!("{cli:?}"))
    }

    fn fast_reads(line: &[&str], env: Option<&str>) -> Option<String> {
        parse(&words(line), env.map(OsString::from)).map(|cli| format!("{cli:?}"))
    }

    #[test]
    fn the_hot_paths_lines_are_read_here_as_clap_reads_them() {
        assert!(
            std::env::var_os(crate::WORKFLOW_ENV).is_none(),
            "clap would read the test process's own workflow variable"
        );
        for line in [
            &["get-task"][..],
            &["--json", "get-task"],
            &["get-task", "--json", "-q"],
            &["--workflow", "w1", "status"],
            &["status", "--workflow=w-2", "--quiet"],
            &["submit-work", "-s", "did it", "--test-command", "sh t.sh"],
            &[
                "--json",
                "submit-work",
                "--summary=x",
                "--test-command=exit 1",
            ],
            &["submit-work", "--test-command", "true", "--summary", "s"],
            &["agent-hook", "claude", "pre-tool-use"],
            &["agent-hook", "gemini", "session-start", "--workflow", "a"],
            &["--quiet", "agent-hook", "codex", "stop"],
            &["board"],
            &["board", "--json", "--workflow", "w"],
        ] {
            let fast = fast_reads(line, None);
            assert!(fast.is_some(), "{line:?} is a hot path's line");
            assert_eq!(fast, clap_reads(line), "{line:?}");
        }
    }

    #[test]
    fn the_version_is_printed_as_clap_prints_it() {
        use clap::CommandFactory as _;
        let clap = Cli::command().render_version().to_string();
        for line in [&["--version"][..], &["-V"]] {
            assert_eq!(version(&words(line)).as_deref(), Some(clap.as_str()));
        }
        for line in [
            &["--version", "--json"][..],
            &["-V", "status"],
            &[],
            &["--Version"],
        ] {
            assert_eq!(version(&words(line)), None, "{line:?}");
        }
    }

    #[test]
    fn lines_of_other_shapes_are_left_to_clap() {
        for line in [
            &[][..],
            &["get-task", "--role", "manager"],
            &["get-task", "--json", "--json"],
            &["-qq", "status"],
            &["status", "--workflow="],
            &["status", "--workflow", "-x"],
            &["status", "--", "x"],
            &["status", "extra"],
            &["submit-work", "-s", "x"],
            &["submit-work", "-sx", "--test-command", "t"],
            &["submit-work", "-s", "x", "--test-command", "t", "--squash"],
            &["submit-work", "-s", "x", "-s", "y", "--test-command", "t"],
            &["submit-work", "-s", "-", "--test-command", "t"],
            &["submit-work", "-s=x", "--test-command", "t"],
            &["status", "-s", "x"],
            &["agent-hook", "Claude", "stop"],
            &["agent-hook", "claude"],
            &["--help"],
            &["get-task", "-h"],
            &["--version"],
        ] {
            assert_eq!(fast_reads(line, None), None, "{line:?}");
        }
    }

    #[test]
    fn the_workflow_variable_is_read_where_no_option_names_one() {
        let read = |line: &[&str], env| {
            parse(&words(line), env).map(|cli| cli.workflow.unwrap_or_default())
        };
        assert_eq!(read(&["status"], Some("w".into())), Some("w".into()));
        assert_eq!(
            read(&["status", "--workflow", "o"], Some("w".into())),
            Some("o".into())
        );
        // Empty, as clap passes it on: the workflow's name check refuses it.
        assert_eq!(read(&["status"], Some("".into())), Some(String::new()));
        use std::os::unix::ffi::OsStringExt as _;
        let not_utf8 = OsString::from_vec(vec![0xff]);
        assert_eq!(read(&["status"], Some(not_utf8)), None);
        assert!(parse(&[OsString::from_vec(vec![0xff])], None).is_none());
    }

    const ALPHABET: &[&str] = &[
        "get-task",
        "status",
        "submit-work",
        "agent-hook",
        "claude",
        "codex",
        "gemini",
        "pre-tool-use",
        "stop",
        "session-start",
        "--json",
        "-q",
        "--quiet",
        "-qq",
        "--workflow",
        "--workflow=w",
        "--workflow=",
        "w",
        "-s",
        "--summary",
        "--summary=x y",
        "--summary=",
        "--test-command",
        "--test-command=true",
        "--squash",
        "--role",
        "manager",
        "-",
        "--",
        "-x",
        "",
        "x=y",
        "--expectation",
        "PASS",
        "board",
        "--remote",
        "origin",
        "--all",
        "--serve",
        "--port=0",
        "--timeline",
    ];

    /// Every line one edit away from a hot path's line (a word of the alphabet put in, taken
    /// out or put in place of another): where this reads it, clap reads it the same.
    #[test]
    fn a_line_one_edit_from_a_hot_paths_line_is_read_so_by_clap() {
        let templates: [&[&str]; 7] = [
            &["board"],
            &["-q", "board", "--json"],
            &["--json", "get-task"],
            &["status", "--workflow", "w"],
            &["submit-work", "-s", "x", "--test-command", "t"],
            &["agent-hook", "claude", "stop"],
            &["-q", "agent-hook", "gemini", "pre-tool-use"],
        ];
        let (mut read_here, mut checked) = (0, 0);
        for template in templates {
            let mut lines: Vec<Vec<&str>> = Vec::new();
            for at in 0..=template.len() {
                for word in ALPHABET {
                    let mut line = template.to_vec();
                    line.insert(at, word);
                    lines.push(line);
                    if at < template.len() {
                        let mut line = template.to_vec();
                        line[at] = word;
                        lines.push(line);
                    }
                }
                if at < template.len() {
                    let mut line = template.to_vec();
                    line.remove(at);
                    lines.push(line);
                }
            }
            for line in lines {
                checked += 1;
                if let Some(fast) = fast_reads(&line, None) {
                    read_here += 1;
                    assert_eq!(Some(fast), clap_reads(&line), "{line:?}");
                }
            }
        }
        // Enough of them are read here for the comparison to mean something.
        assert!(read_here >= 100, "{read_here} of {checked}");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]
        #[test]
        fn a_line_read_here_is_read_so_by_clap(
            picks in prop::collection::vec(0..ALPHABET.len(), 0..8)
        ) {
            let line: Vec<&str> = picks.iter().map(|&i| ALPHABET[i]).collect();
            if let Some(fast) = fast_reads(&line, None) {
                prop_assert_eq!(Some(fast), clap_reads(&line), "{:?}", line);
            }
        }
    }
}
