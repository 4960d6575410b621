//! `git …` as the guard reads it: the global options, the subcommand, its options by
//! git's own table (which take a value, which skip hooks, which write a file), and what
//! each subcommand may not touch: the hooks, the orchestrator's refs, the main branch, the
//! protected paths.

use bstr::BStr;
use gix_glob::wildmatch::Mode;

use super::Walk;
use super::git_options::{self, Takes};
use super::policy::{MainMove, ORCHESTRATOR_REFS, Reason, Rule, Unknown, risky_setting};
use super::words::{Arg, unknowable};
use crate::shell::Simple;

/// A subcommand's arguments sorted by git's table.
#[derive(Default)]
pub(super) struct Parsed {
    /// Options as written (`--no-verify`, `-n`), each with its value if it takes one.
    pub(super) options: Vec<(String, Option<Arg>)>,
    pub(super) operands: Vec<Arg>,
    /// After `--`: paths.
    pub(super) paths: Vec<Arg>,
}

impl Parsed {
    pub(super) fn has(&self, names: &[&str]) -> bool {
        self.options
            .iter()
            .any(|(o, _)| names.contains(&o.as_str()))
    }

    pub(super) fn value(&self, names: &[&str]) -> Option<&Arg> {
        self.options
            .iter()
            .find(|(o, _)| names.contains(&o.as_str()))
            .and_then(|(_, v)| v.as_ref())
    }

    pub(super) fn operand_texts(&self) -> Vec<&str> {
        self.operands.iter().map(|a| a.text.as_str()).collect()
    }
}

/// Subcommands none of whose options skips a hook, writes a file or a ref the orchestrator
/// keeps, or runs a command: a word the guard cannot know may be any of their options.
const ANY_OPTION_IS_HARMLESS: &[&str] = &[
    "add",
    "status",
    "blame",
    "grep",
    "ls-files",
    "ls-tree",
    "rev-parse",
    "rev-list",
    "cat-file",
    "describe",
    "shortlog",
    "check-ignore",
    "check-attr",
    "merge-base",
    "name-rev",
    "show-ref",
    "for-each-ref",
    "count-objects",
    "verify-commit",
    "diff-tree",
    "diff-files",
    "diff-index",
    "var",
    "help",
    "version",
    "stash",
    "tag",
    "reset",
    "cherry",
    "range-diff",
    "whatchanged",
    "annotate",
    "mergetool",
    "difftool",
    "hash-object",
    "bisect",
];

/// A word the guard cannot know that may begin with `-`, and so be an option.
fn may_be_option(arg: &Arg) -> bool {
    arg.unknown.is_some() && arg.as_pattern().starts_with(['*', '?', '[', '-'])
}

/// Whether a pattern of a word the guard cannot know may be one of `names`.
fn may_name(pattern: &str, names: &[String]) -> bool {
    names.iter().any(|name| {
        gix_glob::wildmatch(
            BStr::new(pattern.as_bytes()),
            BStr::new(name.as_bytes()),
            Mode::empty(),
        )
    })
}

/// Whether a ref named by `arg` may be the main branch (known: it is; unknowable: it may be).
fn may_be_main(arg: &Arg, main: &str) -> bool {
    match arg.value() {
        Some(text) => is_main(text, main),
        None => {
            let pattern = arg.as_pattern();
            [
                main.to_string(),
                format!("refs/heads/{main}"),
                format!("+{main}"),
            ]
            .iter()
            .any(|name| {
                gix_glob::wildmatch(
                    BStr::new(pattern.as_bytes()),
                    BStr::new(name.as_bytes()),
                    Mode::empty(),
                )
            })
        }
    }
}

/// Splits `args` (after the subcommand) by the table of `sub`.
fn parse(sub: &str, args: &[Arg]) -> Result<Parsed, Reason> {
    let mut parsed = Parsed::default();
    let mut i = 0;
    let any_option = ANY_OPTION_IS_HARMLESS.contains(&sub);
    while i < args.len() {
        let arg = &args[i];
        let Some(text) = arg.value() else {
            // A word git may take as an option: refused where an option can do harm.
            if may_be_option(arg) && !any_option {
                return Err(unknowable(arg, Unknown::GitArgument));
            }
            parsed.operands.push(arg.clone());
            i += 1;
            continue;
        };
        if text == "--" {
            parsed.paths.extend(args[i + 1..].iter().cloned());
            break;
        }
        if let Some(long) = text.strip_prefix("--").filter(|l| !l.is_empty()) {
            let (name, attached) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v)),
                None => (long, None),
            };
            let takes = git_options::long(sub, &format!("--{name}")).unwrap_or(Takes::Nothing);
            let full = format!("--{}", git_options::expand_long(sub, name).unwrap_or(name));
            let value = match (attached, takes) {
                (Some(v), _) => Some(Arg {
                    text: v.to_string(),
                    ..arg.clone()
                }),
                (None, Takes::Value) => {
                    i += 1;
                    args.get(i).cloned()
                }
                _ => None,
            };
            parsed.options.push((full, value));
            i += 1;
            continue;
        }
        if text.starts_with('-') && text.len() > 1 && !text.starts_with("--") {
            // A cluster: `-am msg`, `-mmsg`, `-uno`.
            let letters: Vec<char> = text[1..].chars().collect();
            let mut at = 0;
            while at < letters.len() {
                let letter = letters[at];
                let takes = git_options::short(sub, letter).unwrap_or(Takes::Nothing);
                let rest: String = letters[at + 1..].iter().collect();
                match takes {
                    Takes::Value if !rest.is_empty() => {
                        parsed
                            .options
                            .push((format!("-{letter}"), Some(Arg::known(rest))));
                        break;
                    }
                    Takes::Value => {
                        i += 1;
                        parsed
                            .options
                            .push((format!("-{letter}"), args.get(i).cloned()));
                        break;
                    }
                    Takes::OptionalValue => {
                        let value = (!rest.is_empty()).then(|| Arg::known(rest));
                        parsed.options.push((format!("-{letter}"), value));
                        break;
                    }
                    Takes::Nothing => {
                        parsed.options.push((format!("-{letter}"), None));
                        at += 1;
                    }
                }
            }
            i += 1;
            continue;
        }
        parsed.operands.push(arg.clone());
        i += 1;
    }
    Ok(parsed)
}

/// Whether a ref name (`main`, `refs/heads/main`, `+main`, `HEAD:main`'s destination) is
/// the main branch.
pub(super) fn is_main(name: &str, main: &str) -> bool {
    let name = name.trim_start_matches('+');
    name == main || name == format!("refs/heads/{main}") || name == format!("heads/{main}")
}

pub(super) fn is_orchestrator_ref(name: &str) -> bool {
    ORCHESTRATOR_REFS
        .iter()
        .any(|r| name.contains(r.trim_end_matches('/')))
}

/// A refspec's destination (`SRC:DST` → DST; `REF` → REF), a glob refspec's as a pattern:
/// refused when it may write the main branch or a ref the orchestrator keeps.
pub(super) fn check_destination(
    dst: &str,
    main: &str,
    raw: &str,
    push: bool,
) -> Result<(), Reason> {
    let dst = dst.trim_start_matches('+');
    if is_orchestrator_ref(dst) {
        return Err(Reason::new(Rule::OrchestratorRef, raw));
    }
    if is_main(dst, main) {
        return Err(Reason::new(
            Rule::MainBranch(if push { MainMove::Push } else { MainMove::Move }),
            raw,
        ));
    }
    if dst.contains(['*', '?', '[']) {
        let candidates = [
            format!("refs/heads/{main}"),
            "refs/orchestrator/workflows/x".to_string(),
            "refs/notes/orchestrator".to_string(),
            "refs/replace/x".to_string(),
        ];
        for candidate in candidates {
            if gix_glob::wildmatch(
                BStr::new(dst.as_bytes()),
                BStr::new(candidate.as_bytes()),
                Mode::empty(),
            ) {
                return Err(Reason::new(
                    if candidate.contains("heads") {
                        Rule::MainBranch(if push { MainMove::Push } else { MainMove::Move })
                    } else {
                        Rule::OrchestratorRef
                    },
                    raw,
                ));
            }
        }
    }
    Ok(())
}

impl Walk<'_> {
    /// `git ARGS…`.
    pub(super) fn git(&mut self, args: &[Arg], simple: &Simple) -> Result<(), Reason> {
        let mut cwds = self.cwds.clone();
        let mut i = 0;
        while i < args.len() {
            let arg = &args[i];
            let Some(text) = arg.value() else {
                return Err(unknowable(arg, Unknown::GitArgument));
            };
            if !text.starts_with('-') {
                break;
            }
            let (option, attached) = match text.split_once('=') {
                Some((o, v)) if text.starts_with("--") => (o, Some(v.to_string())),
                _ if text.starts_with("-c") && text.len() > 2 => {
                    ("-c", Some(text[2..].to_string()))
                }
                _ if text.starts_with("-C") && text.len() > 2 => {
                    ("-C", Some(text[2..].to_string()))
                }
                _ => (text, None),
            };
            let takes = git_options::global(option).unwrap_or(Takes::Nothing);
            let value: Option<Arg> = match (&attached, takes) {
                (Some(v), _) => Some(Arg {
                    text: v.clone(),
                    ..arg.clone()
                }),
                (None, Takes::Value) => {
                    i += 1;
                    Some(args.get(i).cloned().unwrap_or_else(|| Arg::known("")))
                }
                _ => None,
            };
            i += 1;
            let Some(value) = value else { continue };
            let Some(v) = value.value() else {
                return Err(unknowable(&value, Unknown::GitArgument));
            };
            match option {
                "-c" | "--config-env" => {
                    let key = v.split_once('=').map_or(v, |(k, _)| k);
                    if let Some(setting) = risky_setting(key) {
                        return Err(Reason::new(
                            Rule::Setting(setting),
                            format!("git {option} {v}"),
                        ));
                    }
                }
                "-C" => cwds.change(Some(v), true),
                "--work-tree" => {
                    // Every file the command writes lands under it.
                    self.paths
                        .target(&Arg::known(format!("{v}/x")), &cwds, false)?;
                }
                "--exec-path" => {
                    return Err(Reason::new(
                        Rule::Variable(super::policy::Variable::Git),
                        format!("git --exec-path={v}"),
                    ));
                }
                _ => {}
            }
        }
        let Some(sub_arg) = args.get(i) else {
            return Ok(());
        };
        let Some(sub) = sub_arg.value() else {
            return Err(unknowable(sub_arg, Unknown::GitArgument));
        };
        let saved = std::mem::replace(&mut self.cwds, cwds);
        let result = self.git_subcommand(sub, &args[i + 1..], simple);
        self.cwds = saved;
        result
    }

    fn git_subcommand(&mut self, sub: &str, rest: &[Arg], simple: &Simple) -> Result<(), Reason> {
        let parsed = parse(sub, rest)?;
        let main = self.paths.ctx.main_branch.clone();
        let main = main.as_str();
        let on_main = self.head.as_deref() == Some(main);
        skips_hooks(sub, &parsed)?;
        self.option_files(sub, &parsed)?;
        if on_main
            && matches!(
                sub,
                "merge" | "cherry-pick" | "revert" | "am" | "rebase" | "pull" | "commit"
            )
        {
            return Err(Reason::new(
                Rule::MainBranch(MainMove::Commit),
                format!("git {sub}"),
            ));
        }
        let ops = parsed.operand_texts();
        match sub {
            "commit-tree" | "fast-import" | "filter-branch" | "filter-repo" | "mktag" => {
                return Err(Reason::new(Rule::Unhooked, format!("git {sub}")));
            }
            "fetch" | "pull" => fetch_refspecs(&parsed, &ops, main)?,
            "push" => self.git_push(&parsed, main, on_main)?,
            "rebase" => self.git_rebase(&parsed, &ops, main)?,
            "submodule" if ops.contains(&"foreach") => {
                let at = ops.iter().position(|w| *w == "foreach").unwrap_or_default();
                let command: Vec<&str> = ops[at + 1..].to_vec();
                self.line(&command.join(" "))?;
            }
            "rm" if parsed.has(&["--cached"]) => {}
            "rm" | "mv" | "restore" => self.git_rm_mv_restore(sub, &parsed)?,
            "checkout" | "switch" => self.git_checkout(sub, &parsed, main)?,
            "worktree" if ops.first() == Some(&"add") => {
                self.git_worktree_add(&parsed, &ops, main)?
            }
            "config" => self.git_config(&parsed)?,
            "update-ref" | "symbolic-ref" | "replace" => ref_writes(sub, &parsed, &ops, main)?,
            "reflog"
                if ops
                    .first()
                    .is_some_and(|w| matches!(*w, "expire" | "delete" | "drop")) =>
            {
                return Err(Reason::new(
                    Rule::ReflogErase,
                    format!("git reflog {}", ops[0]),
                ));
            }
            "notes" => git_notes(rest, &parsed)?,
            "branch" => git_branch(&parsed, main)?,
            "reset" if on_main => reset_on_main(&parsed)?,
            "apply" => {
                let reads_only = parsed.has(&["--check", "--stat", "--numstat", "--summary"])
                    && !parsed.has(&["--apply"]);
                if !reads_only {
                    self.git_patch("git apply", &parsed, simple)?;
                }
            }
            "am" => self.git_patch("git am", &parsed, simple)?,
            "gc" | "prune" | "repack" | "maintenance" => {}
            // A template directory's hooks are copied into the repository.
            "init" | "clone" if parsed.options.iter().any(|(o, _)| o == "--template") => {
                return Err(Reason::new(
                    Rule::Setting(super::policy::Setting::RunsOrReads),
                    format!("git {sub} --template"),
                ));
            }
            "orchestrate" => super::programs::orchestrate(rest, self.paths.ctx.role)?,
            _ => {}
        }
        Ok(())
    }

    /// The files the options of `git <sub>` name that git writes (`--output`), and what it
    /// may write inside them when they are directories.
    fn option_files(&mut self, sub: &str, parsed: &Parsed) -> Result<(), Reason> {
        // `git config -f FILE` writes only when it sets: `git_config` judges it.
        let writes_file = if sub == "config" {
            &[][..]
        } else {
            git_options::writes_file(sub)
        };
        for option in writes_file {
            if let Some((_, Some(value))) = parsed.options.iter().find(|(o, _)| o == option) {
                self.paths.target(value, &self.cwds, false)?;
                self.paths.target(&inside(value), &self.cwds, false)?;
            }
        }
        Ok(())
    }

    /// `git rebase`: the commands `--exec` runs, and the branch it checks out first.
    fn git_rebase(&mut self, parsed: &Parsed, ops: &[&str], main: &str) -> Result<(), Reason> {
        for (option, value) in &parsed.options {
            if matches!(option.as_str(), "-x" | "--exec") {
                match value.as_ref().and_then(Arg::value) {
                    Some(command) => self.line(command)?,
                    None => {
                        return Err(Reason::new(
                            Rule::Unknowable(Unknown::Script),
                            "git rebase --exec",
                        ));
                    }
                }
            }
        }
        // `git rebase UPSTREAM BRANCH` checks BRANCH out first, then rewrites it.
        // With `--root` there is no upstream: the one operand is the branch.
        let at = if parsed.has(&["--root"]) { 0 } else { 1 };
        if let Some(branch) = parsed.operands.get(at)
            && may_be_main(branch, main)
        {
            return Err(Reason::new(
                Rule::MainBranch(MainMove::Move),
                format!("git rebase {} {}", ops[0], branch.text),
            ));
        }
        Ok(())
    }

    /// `git rm`, `git mv` and `git restore`: the paths they remove, move or write.
    fn git_rm_mv_restore(&mut self, sub: &str, parsed: &Parsed) -> Result<(), Reason> {
        if sub == "restore" && parsed.has(&["--staged", "-S"]) && !parsed.has(&["--worktree", "-W"])
        {
            return Ok(());
        }
        let all: Vec<&Arg> = parsed.operands.iter().chain(&parsed.paths).collect();
        let count = all.len();
        for (at, path) in all.into_iter().enumerate() {
            let removes = sub == "rm" || (sub == "mv" && at + 1 < count);
            self.paths.target(path, &self.cwds, removes)?;
        }
        Ok(())
    }

    /// `git worktree add [-B BRANCH] PATH [COMMIT]`: the files it writes under PATH, and the
    /// branch it may move.
    fn git_worktree_add(
        &mut self,
        parsed: &Parsed,
        ops: &[&str],
        main: &str,
    ) -> Result<(), Reason> {
        let new_branch = parsed.has(&["-b", "-B", "--detach", "-d", "--orphan"]);
        if let Some((_, Some(name))) = parsed.options.iter().find(|(o, _)| o == "-B")
            && may_be_main(name, main)
        {
            return Err(Reason::new(
                Rule::MainBranch(MainMove::Move),
                format!("git worktree add -B {}", name.text),
            ));
        }
        if let Some(path) = parsed.operands.get(1) {
            self.paths.target(&inside(path), &self.cwds, false)?;
        }
        if !new_branch
            && let Some(commit) = parsed.operands.get(2)
            && may_be_main(commit, main)
        {
            return Err(Reason::new(
                Rule::MainBranch(MainMove::Move),
                format!("git worktree add {} {}", ops[1], commit.text),
            ));
        }
        Ok(())
    }

    /// `git apply` and `git am`: the files the patches they read would write.
    fn git_patch(&mut self, what: &str, parsed: &Parsed, simple: &Simple) -> Result<(), Reason> {
        let stdin = self.patch_stdin(parsed, simple, what)?;
        self.patch_files(&parsed.operands, stdin.as_deref(), what, None)
    }
}

/// A file inside the directory `arg` may name.
fn inside(arg: &Arg) -> Arg {
    Arg {
        text: format!("{}/x", arg.text),
        pattern: arg.pattern.as_ref().map(|p| format!("{p}/x")),
        unknown: arg.unknown.clone(),
    }
}

/// An option of `git <sub>` that skips its hooks. An abbreviation git may call ambiguous
/// today (`--no-ver`) is refused all the same: another git may take it.
fn skips_hooks(sub: &str, parsed: &Parsed) -> Result<(), Reason> {
    for (letter, long) in git_options::hook_bypass(sub) {
        let short = letter.map(|c| format!("-{c}"));
        if parsed.options.iter().any(|(o, _)| {
            o == long
                || short.as_deref() == Some(o.as_str())
                || (o.len() >= "--no-v".len() && long.starts_with(o.as_str()))
        }) {
            return Err(Reason::new(Rule::SkipsHooks, format!("git {sub} {long}")));
        }
    }
    Ok(())
}

/// `git fetch` and `git pull`: a refspec writes its destination
/// (`git fetch . HEAD:refs/orchestrator/…`).
fn fetch_refspecs(parsed: &Parsed, ops: &[&str], main: &str) -> Result<(), Reason> {
    for (at, op) in parsed.operands.iter().enumerate().skip(1) {
        let Some(spec) = op.value() else {
            return Err(unknowable(op, Unknown::Refspec));
        };
        let Some((src, dst)) = spec.rsplit_once(':') else {
            continue;
        };
        // `git fetch origin main:main` fast-forwards main to the remote's own.
        let fast_forward = !spec.starts_with('+')
            && is_main(src, main)
            && is_main(dst, main)
            && ops
                .first()
                .is_some_and(|r| *r != "." && !r.starts_with('/'));
        if !fast_forward || at == 0 {
            check_destination(dst, main, spec, false)?;
        }
    }
    Ok(())
}

/// `git update-ref`, `git symbolic-ref` and `git replace`: the refs they write.
fn ref_writes(sub: &str, parsed: &Parsed, ops: &[&str], main: &str) -> Result<(), Reason> {
    match sub {
        "update-ref" => {
            if parsed.has(&["--stdin"]) {
                return Err(Reason::new(Rule::OrchestratorRef, "git update-ref --stdin"));
            }
            if let Some(r) = parsed.operands.first() {
                check_ref_arg(r, main, "git update-ref")?;
            }
        }
        "symbolic-ref" => {
            if let Some(r) = parsed.operands.get(1) {
                check_ref_arg(r, main, "git symbolic-ref")?;
            }
        }
        _ => {
            let lists = parsed.has(&["-l", "--list", "--format"])
                || (ops.is_empty() && parsed.options.is_empty());
            if !lists {
                return Err(Reason::new(Rule::OrchestratorRef, "git replace"));
            }
        }
    }
    Ok(())
}

/// `git notes`: a subcommand that writes, on the orchestrator's notes ref.
fn git_notes(rest: &[Arg], parsed: &Parsed) -> Result<(), Reason> {
    // Before its own subcommand, `git notes` has one option, `--ref`, which git
    // takes by any prefix (`--re`): read there, not from the merged table.
    let notes_ref = notes_ref(rest).or_else(|| parsed.value(&["--ref"]).cloned());
    let Some(r) = notes_ref.as_ref() else {
        return Ok(());
    };
    let Some(r) = r.value() else {
        return Err(unknowable(r, Unknown::GitArgument));
    };
    let ours = matches!(
        r,
        "orchestrator" | "notes/orchestrator" | "refs/notes/orchestrator"
    ) || r.contains("orchestrator");
    // Its subcommand: the first word that is neither an option nor the ref.
    let verb = rest
        .iter()
        .map(|a| a.text.as_str())
        .find(|t| !t.starts_with('-') && *t != r)
        .unwrap_or("list");
    let writes = matches!(
        verb,
        "add" | "append" | "copy" | "edit" | "merge" | "remove" | "prune"
    );
    if ours && writes {
        return Err(Reason::new(
            Rule::OrchestratorRef,
            format!("git notes --ref {r} {verb}"),
        ));
    }
    Ok(())
}

/// `git branch`: deleting, renaming or forcing the main branch.
fn git_branch(parsed: &Parsed, main: &str) -> Result<(), Reason> {
    let flag = |long: &[&str], letters: &[char]| {
        parsed.options.iter().any(|(o, _)| {
            long.contains(&o.as_str())
                || (o.len() == 2
                    && o.starts_with('-')
                    && letters.contains(&o.chars().nth(1).unwrap_or_default()))
        })
    };
    let forced = flag(&["--force"], &['f']);
    let deletes = flag(&["--delete"], &['d', 'D']);
    let renames = flag(&["--move", "--copy"], &['m', 'M', 'c', 'C']);
    let names_main = parsed.operands.iter().any(|w| may_be_main(w, main));
    let refused = ((deletes || renames) && names_main)
        || (forced
            && !deletes
            && !renames
            && parsed
                .operands
                .first()
                .is_some_and(|w| may_be_main(w, main)));
    if refused {
        return Err(Reason::new(
            Rule::MainBranch(MainMove::Move),
            format!("git branch … {main}"),
        ));
    }
    Ok(())
}

/// `git reset` on the main branch: any form that moves it.
fn reset_on_main(parsed: &Parsed) -> Result<(), Reason> {
    let moves = parsed.has(&["--hard", "--soft", "--mixed", "--keep", "--merge"])
        || parsed
            .operands
            .first()
            .is_some_and(|w| !w.is_known() || looks_like_revision(&w.text));
    if moves {
        return Err(Reason::new(Rule::MainBranch(MainMove::Move), "git reset"));
    }
    Ok(())
}

/// A ref an operand names, known or not: refused when it may be the main branch or one the
/// orchestrator keeps.
fn check_ref_arg(arg: &Arg, main: &str, what: &str) -> Result<(), Reason> {
    match arg.value() {
        Some(r) => check_destination(r, main, &format!("{what} {r}"), false),
        None => {
            let pattern = arg.as_pattern();
            let could = may_name(
                &pattern,
                &[
                    format!("refs/heads/{main}"),
                    main.to_string(),
                    "refs/orchestrator/workflows/x".into(),
                    "refs/notes/orchestrator".into(),
                    "refs/replace/x".into(),
                ],
            );
            if could {
                Err(unknowable(arg, Unknown::Refspec))
            } else {
                Ok(())
            }
        }
    }
}

impl Walk<'_> {
    /// What `git apply`/`git am` read on stdin, when they are given no file: only then.
    fn patch_stdin(
        &mut self,
        parsed: &Parsed,
        simple: &Simple,
        what: &str,
    ) -> Result<Option<String>, Reason> {
        if parsed.operands.is_empty() {
            self.stdin_text(simple, what)
        } else {
            Ok(None)
        }
    }
}

/// `git notes --ref R …` / `--re=R` before the notes subcommand.
fn notes_ref(args: &[Arg]) -> Option<Arg> {
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        let text = arg.text.as_str();
        let (name, attached) = match text.split_once('=') {
            Some((n, v)) => (n, Some(v)),
            None => (text, None),
        };
        if name.len() > 2 && "--ref".starts_with(name) {
            return match attached {
                Some(v) => Some(Arg {
                    text: v.to_string(),
                    ..arg.clone()
                }),
                None => iter.next().cloned(),
            };
        }
        if !text.starts_with('-') {
            return None;
        }
    }
    None
}

pub(super) fn looks_like_revision(word: &str) -> bool {
    word.starts_with("HEAD")
        || word.starts_with("ORIG_HEAD")
        || word.starts_with("origin/")
        || word.contains('~')
        || word.contains('^')
        || word.contains('@')
        || (word.len() >= 7 && word.chars().all(|c| c.is_ascii_hexdigit()))
}
