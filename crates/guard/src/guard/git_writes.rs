//! What git subcommands write, judged: the refs a push moves, the files a checkout writes,
//! the settings `git config` changes, the branch a checkout leaves HEAD on.

use super::Walk;
use super::git::{Parsed, check_destination, is_main, is_orchestrator_ref};
use super::policy::{MainMove, Reason, Rule, Setting, Unknown, risky_setting};
use super::words::{Arg, unknowable};

impl Walk<'_> {
    pub(super) fn git_push(
        &mut self,
        parsed: &Parsed,
        main: &str,
        on_main: bool,
    ) -> Result<(), Reason> {
        if parsed.has(&["--mirror"]) {
            return Err(Reason::new(Rule::OrchestratorRef, "git push --mirror"));
        }
        if parsed.has(&["--all", "--branches"]) {
            return Err(Reason::new(
                Rule::MainBranch(MainMove::Push),
                "git push --all",
            ));
        }
        let deletes = parsed.has(&["--delete", "-d"]);
        let refspecs = parsed.operands.iter().skip(1);
        let mut any = false;
        for spec in refspecs {
            any = true;
            let Some(text) = spec.value() else {
                return Err(unknowable(spec, Unknown::Refspec));
            };
            let (src, dst) = text.rsplit_once(':').unwrap_or((text, text));
            if is_orchestrator_ref(src) {
                return Err(Reason::new(
                    Rule::OrchestratorRef,
                    format!("git push … {text}"),
                ));
            }
            let dst = if dst == "HEAD" || src == "HEAD" && !text.contains(':') {
                // HEAD pushes the branch it is on.
                if on_main { main } else { dst }
            } else {
                dst
            };
            check_destination(dst, main, &format!("git push … {text}"), true)?;
            if deletes && is_main(src, main) {
                return Err(Reason::new(
                    Rule::MainBranch(MainMove::Push),
                    format!("git push --delete {text}"),
                ));
            }
        }
        if on_main && !any {
            return Err(Reason::new(Rule::MainBranch(MainMove::Push), "git push"));
        }
        Ok(())
    }

    pub(super) fn git_checkout(
        &mut self,
        sub: &str,
        parsed: &Parsed,
        main: &str,
    ) -> Result<(), Reason> {
        for (option, value) in &parsed.options {
            let resets = matches!(option.as_str(), "-B" | "-C" | "--force-create" | "--orphan");
            if resets
                && value
                    .as_ref()
                    .is_some_and(|v| is_main(&v.text, main) || !v.is_known())
            {
                return Err(Reason::new(
                    Rule::MainBranch(MainMove::Move),
                    format!("git {sub} {option} {main}"),
                ));
            }
        }
        if sub == "checkout" {
            // `git checkout REV -- FILE…`, `git checkout REV FILE…`, `git checkout FILE`:
            // files written from a revision or the index.
            let mut written: Vec<&Arg> = parsed.paths.iter().collect();
            let creates = parsed.has(&["-b", "-B", "--orphan"]);
            if !creates {
                if parsed.operands.len() > 1 {
                    written.extend(parsed.operands.iter().skip(1));
                } else if let Some(only) = parsed.operands.first()
                    && parsed.paths.is_empty()
                    && only
                        .value()
                        .is_some_and(|p| self.cwds.known.iter().any(|c| c.join(p).exists()))
                {
                    written.push(only);
                }
            }
            for path in written {
                // A directory checked out is every file in it.
                self.paths.target(path, &self.cwds, true)?;
            }
        }
        Ok(())
    }

    pub(super) fn git_config(&mut self, parsed: &Parsed) -> Result<(), Reason> {
        if parsed.has(&["--edit", "-e"]) || parsed.operand_texts().first() == Some(&"edit") {
            return Err(Reason::new(
                Rule::Setting(Setting::Include),
                "git config --edit",
            ));
        }
        let ops = parsed.operand_texts();
        let verbs_read = ["get", "list", "get-color", "get-colorbool"];
        let reads = parsed.has(&[
            "--get",
            "--get-all",
            "--get-regexp",
            "--get-urlmatch",
            "-l",
            "--list",
            "--get-color",
            "--get-colorbool",
            "--show-origin",
            "--show-scope",
        ]) && !parsed.has(&[
            "--unset",
            "--unset-all",
            "--add",
            "--replace-all",
            "--rename-section",
            "--remove-section",
        ]) || ops.first().is_some_and(|v| verbs_read.contains(v))
            || (ops.len() == 1
                && parsed.options.iter().all(|(o, _)| {
                    !o.starts_with("--unset")
                        && !matches!(
                            o.as_str(),
                            "--add" | "--replace-all" | "--remove-section" | "--rename-section"
                        )
                }));
        if reads {
            return Ok(());
        }
        if let Some(file) = parsed.value(&["--file", "-f"]) {
            self.paths.target(file, &self.cwds, false)?;
        }
        for op in &parsed.operands {
            let Some(key) = op.value() else {
                return Err(unknowable(op, Unknown::GitArgument));
            };
            if let Some(setting) = risky_setting(key) {
                return Err(Reason::new(Rule::Setting(setting), key));
            }
        }
        for (option, value) in &parsed.options {
            if matches!(
                option.as_str(),
                "--unset" | "--unset-all" | "--rename-section" | "--remove-section"
            ) && let Some(v) = value
                && let Some(setting) = risky_setting(&v.text)
            {
                return Err(Reason::new(Rule::Setting(setting), v.text.clone()));
            }
        }
        Ok(())
    }
}

/// The branch `git checkout B` / `git switch B` (or `-b B`…) leaves HEAD on; the main
/// branch when it cannot be told (`git checkout -`, a name from an expansion), which is the
/// careful guess. `None` when HEAD stays (`git checkout -- FILE`, `git checkout REV FILE`).
pub fn switched_branch(args: &[Arg], main: &str) -> Option<String> {
    let [git, after @ ..] = args else {
        return None;
    };
    if super::programs::basename(&git.text) != "git" {
        return None;
    }
    // Past git's own options (`--no-pager`, `-C DIR`, `-c k=v`).
    let mut at = 0;
    while let Some(word) = after.get(at).filter(|w| w.text.starts_with('-')) {
        let takes =
            super::git_options::global(&word.text) == Some(super::git_options::Takes::Value);
        at += if takes && !word.text.contains('=') {
            2
        } else {
            1
        };
    }
    let [sub, rest @ ..] = after.get(at..).unwrap_or_default() else {
        return None;
    };
    if !matches!(sub.text.as_str(), "checkout" | "switch") {
        return None;
    }
    // `git checkout B -- FILE` stays; `git checkout B --` switches.
    if let Some(dashes) = rest.iter().position(|w| w.text == "--")
        && dashes + 1 < rest.len()
    {
        return None;
    }
    let rest: Vec<&Arg> = rest.iter().filter(|w| w.text != "--").collect();
    let mut iter = rest.into_iter();
    let mut operands = Vec::new();
    while let Some(w) = iter.next() {
        if matches!(w.text.as_str(), "-b" | "-B" | "-c" | "-C" | "--orphan") {
            return iter.next().map(|v| v.value().unwrap_or(main).to_string());
        }
        if let Some(v) = w
            .text
            .strip_prefix("--create=")
            .or_else(|| w.text.strip_prefix("--force-create="))
            .or_else(|| w.text.strip_prefix("--orphan="))
        {
            return Some(v.to_string());
        }
        if w.text == "-" {
            return Some(main.to_string());
        }
        if !w.text.starts_with('-') || !w.is_known() {
            operands.push(w);
        }
    }
    match operands.as_slice() {
        [one] => Some(one.value().unwrap_or(main).to_string()),
        _ => None,
    }
}
