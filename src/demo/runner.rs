//! Carries out the demo's steps (src/demo/scenario.rs) in a repository with this very binary:
//! runs each, checks it did what the script expects, narrates it for people and records it
//! for `--json`.

use std::ffi::{OsStr, OsString};
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::error::{DemoError, io};
use super::scenario::{Actor, Expect, Step};
use crate::exec;
use crate::workflow::briefing::shell_quote;

/// Lifts the terminal check of a human's command (`resume`, `approve`, `reject`).
const HUMAN_ENV: &str = "GIT_ORCHESTRATE_HUMAN";

/// The workflow the demo drives (the default one).
pub(super) const DEMO_WORKFLOW: &str = "main";

/// One thing the scripted agent or human did, as `--json` reports it.
#[derive(Debug, Serialize)]
pub struct StepRecord {
    actor: &'static str,
    what: String,
    command: Option<String>,
    exit: Option<i32>,
    stdout: String,
    stderr: String,
    /// Workflow commits made by this step: `<short id> <subject>`.
    transitions: Vec<String>,
}

/// What a command printed and how it exited.
struct Ran {
    command: String,
    stdout: String,
    stderr: String,
    code: i32,
}

pub(super) struct Runner<'a> {
    repo: PathBuf,
    exe: PathBuf,
    path_env: OsString,
    /// The narration for people; `None` with `--json`, where the steps speak for themselves.
    out: Option<&'a mut dyn Write>,
    shown_tip: Option<String>,
    steps: Vec<StepRecord>,
}

impl<'a> Runner<'a> {
    /// A runner in `repo` that runs `exe` for `git orchestrate`, with `path_env` as PATH.
    pub(super) fn new(
        repo: PathBuf,
        exe: PathBuf,
        path_env: OsString,
        out: Option<&'a mut dyn Write>,
    ) -> Self {
        Runner {
            repo,
            exe,
            path_env,
            out,
            shown_tip: None,
            steps: Vec::new(),
        }
    }

    /// What the steps did, in order.
    pub(super) fn into_steps(self) -> Vec<StepRecord> {
        self.steps
    }

    /// Carries out one step of the scenario.
    pub(super) fn perform(&mut self, step: Step) -> Result<(), DemoError> {
        match step {
            Step::Say(text) => self.say(text),
            Step::Act(actor, what) => self.act(actor, what),
            Step::Write { path, content } => self.write(path, &content),
            Step::WriteNamingHead { path, content } => {
                let head = self.git(&["rev-parse", "--short=12", "HEAD"])?;
                self.write(path, &content(head.trim()))
            }
            Step::Remove(path) => self.remove(path),
            Step::Git(args) => self.git(&args).map(drop),
            Step::ShowGit { heading, args } => {
                let output = self.git(&args)?;
                match heading {
                    Some(heading) => self.say(&format!("{heading}\n{output}")),
                    None => self.say(&output),
                }
            }
            Step::Squash { onto, message } => {
                let base = self.git(&["merge-base", onto, "HEAD"])?;
                self.git(&["reset", "--soft", base.trim()])?;
                self.git(&["commit", "--quiet", "-m", message]).map(drop)
            }
            Step::TypeGit {
                actor,
                what,
                args,
                succeeds,
            } => self.type_git(actor, what, &args, succeeds),
            Step::Orchestrate {
                actor,
                what,
                args,
                stdin,
                expect,
            } => self.orchestrate(actor, what, &args, stdin, expect),
        }
    }

    /// Narration for people.
    pub(super) fn say(&mut self, text: &str) -> Result<(), DemoError> {
        let Some(out) = self.out.as_mut() else {
            return Ok(());
        };
        let mut text = text.to_string();
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        out.write_all(text.as_bytes())
            .and_then(|()| out.flush())
            .map_err(DemoError::Narration)
    }

    /// Something done outside `git orchestrate`: editing files, looking at git.
    fn act(&mut self, actor: Actor, what: &str) -> Result<(), DemoError> {
        self.say(&format!("\n━━━━ {}: {what}", actor.name()))?;
        self.steps.push(StepRecord {
            actor: actor.name(),
            what: what.to_string(),
            command: None,
            exit: None,
            stdout: String::new(),
            stderr: String::new(),
            transitions: Vec::new(),
        });
        Ok(())
    }

    fn remove(&self, path: &str) -> Result<(), DemoError> {
        let full = self.repo.join(path);
        std::fs::remove_file(&full).map_err(io(format!("remove {}", full.display())))
    }

    fn write(&self, path: &str, content: &str) -> Result<(), DemoError> {
        let full = self.repo.join(path);
        if let Some(parent) = full.parent() {
            std::fs::create_dir_all(parent).map_err(io(format!("create {}", parent.display())))?;
        }
        std::fs::write(&full, content).map_err(io(format!("write {}", full.display())))
    }

    /// Runs git quietly; its stdout, or an error if it failed.
    pub(super) fn git(&self, args: &[&str]) -> Result<String, DemoError> {
        let out = self.git_captured(args)?;
        if out.code != Some(0) {
            return Err(DemoError::Git(format!(
                "git {} failed: {}",
                args.join(" "),
                String::from_utf8_lossy(&out.stderr)
            )));
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// Runs git with the demo's PATH, so that the installed hooks run this binary.
    fn git_captured(&self, args: &[&str]) -> Result<exec::Captured, DemoError> {
        exec::run_captured(
            Path::new("git"),
            args,
            &self.repo,
            &[("PATH", Some(self.path_env.as_os_str()))],
            None,
        )
        .map_err(io("run git"))
    }

    /// Announces `program ARGS` as the actor types it.
    fn announce(
        &mut self,
        actor: Actor,
        what: &str,
        program: &str,
        args: &[&str],
    ) -> Result<String, DemoError> {
        let shown: Vec<String> = args.iter().map(|a| shell_quote(a)).collect();
        let command = format!("{program} {}", shown.join(" "));
        self.say(&format!("\n━━━━ {}: {what}\n$ {command}", actor.name()))?;
        Ok(command)
    }

    /// Shows what a command printed and how it exited.
    fn show(&mut self, command: String, out: &exec::Captured) -> Result<Ran, DemoError> {
        let ran = Ran {
            command,
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            code: out.code.unwrap_or(-1),
        };
        self.say(&ran.stdout)?;
        self.say(&ran.stderr)?;
        self.say(&format!("[exit {}]", ran.code))?;
        Ok(ran)
    }

    fn record(&mut self, actor: Actor, what: &str, ran: Ran, transitions: Vec<String>) {
        self.steps.push(StepRecord {
            actor: actor.name(),
            what: what.to_string(),
            command: Some(ran.command),
            exit: Some(ran.code),
            stdout: ran.stdout,
            stderr: ran.stderr,
            transitions,
        });
    }

    /// Runs a git command the actor types, hooks and all, and shows what it printed;
    /// `succeeds` is what the script expects of it.
    fn type_git(
        &mut self,
        actor: Actor,
        what: &str,
        args: &[&str],
        succeeds: bool,
    ) -> Result<(), DemoError> {
        let command = self.announce(actor, what, "git", args)?;
        let out = self.git_captured(args)?;
        let ran = self.show(command, &out)?;
        if (ran.code == 0) != succeeds {
            return Err(DemoError::Unexpected(format!(
                "the demo expected `{}` to {}, but it exited {}:\n{}",
                ran.command,
                if succeeds { "succeed" } else { "fail" },
                ran.code,
                ran.stderr
            )));
        }
        self.record(actor, what, ran, Vec::new());
        Ok(())
    }

    /// Runs `git orchestrate ARGS` (this binary) as the actor would, prints what it printed
    /// and the transitions it made, and checks the exit code the script expects.
    fn orchestrate(
        &mut self,
        actor: Actor,
        what: &str,
        args: &[&str],
        stdin: Option<&str>,
        expect: Expect,
    ) -> Result<(), DemoError> {
        let command = self.announce(actor, what, "git orchestrate", args)?;
        // The human's commands are typed in a terminal; the demo says so the way a script
        // acting for a person does. The agent runs without that claim.
        let human = (actor == Actor::Human).then_some(OsStr::new("1"));
        let env = [
            ("PATH", Some(self.path_env.as_os_str())),
            ("GIT_ORCHESTRATE_WORKFLOW", None),
            (HUMAN_ENV, human),
        ];
        let out = exec::run_captured(&self.exe, args, &self.repo, &env, stdin.map(str::as_bytes))
            .map_err(io(format!("run {}", self.exe.display())))?;
        let ran = self.show(command, &out)?;
        if ran.code != expect.code() {
            return Err(DemoError::Unexpected(format!(
                "the demo expected exit {} from `{}`, got {}:\n{}",
                expect.code(),
                ran.command,
                ran.code,
                ran.stderr
            )));
        }
        let transitions = self.transitions()?;
        self.record(actor, what, ran, transitions);
        Ok(())
    }

    /// Prints and returns the workflow commits made since the last look.
    fn transitions(&mut self) -> Result<Vec<String>, DemoError> {
        let reference = crate::store::workflow_ref(DEMO_WORKFLOW);
        let reference = reference.as_str();
        let tip = self
            .git(&["rev-parse", "--verify", "--quiet", reference])
            .ok();
        let tip = tip.map(|t| t.trim().to_string()).filter(|t| !t.is_empty());
        if tip == self.shown_tip {
            return Ok(Vec::new());
        }
        let range = match &self.shown_tip {
            Some(old) => format!("{old}..{reference}"),
            None => reference.to_string(),
        };
        let log = self.git(&["log", "--reverse", "--format=%h %s", &range])?;
        let lines: Vec<String> = log.lines().map(str::to_string).collect();
        for line in &lines {
            self.say(&format!("  transition {line}"))?;
        }
        self.shown_tip = tip;
        Ok(lines)
    }
}
