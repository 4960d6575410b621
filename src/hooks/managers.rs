//! Our hooks in the hook managers people already use (pre-commit, lefthook, husky): the
//! entries added to each manager's own configuration, as text edits between marker lines so
//! that every other entry and the file's layout stay as they are, and `uninstall` takes out
//! exactly what was added (a line we had to change comes back from its `# was:` copy). Pure:
//! text in, text out.

use super::{BEGIN, END};

/// What a line we replaced was, inside our block.
const WAS: &str = "# was: ";
/// Inside our block: the file had no newline at its end, and we added one.
const ADDED_NEWLINE: &str = "# (git-orchestrate added the newline at the end of this file)";

/// The pre-commit stages our hooks need, with `pre-commit` kept for the user's own hooks.
const PRE_COMMIT_TYPES: [&str; 4] = ["pre-commit", "commit-msg", "post-commit", "pre-push"];

/// True when `text` holds a block of ours.
pub fn has_ours(text: &str) -> bool {
    text.lines().any(|l| l.trim() == BEGIN)
}

/// `text` without our blocks: each replaced by the lines it says it replaced.
pub fn remove_ours(text: &str) -> String {
    let mut out = String::new();
    let mut inside = false;
    let mut added_newline = false;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim();
        if !inside && trimmed == BEGIN {
            inside = true;
            continue;
        }
        if inside {
            if trimmed == END {
                inside = false;
            } else if trimmed == ADDED_NEWLINE {
                added_newline = true;
            } else if let Some(original) = line.trim_start().strip_prefix(WAS) {
                out.push_str(original);
            }
            continue;
        }
        out.push_str(line);
    }
    if added_newline && out.ends_with('\n') {
        out.pop();
    }
    out
}

/// `text` ending with a newline, and the line that says so when we had to add it (it goes
/// into our first block).
fn with_final_newline(text: &str) -> (String, Option<String>) {
    if text.is_empty() || text.ends_with('\n') {
        (text.to_string(), None)
    } else {
        (format!("{text}\n"), Some(ADDED_NEWLINE.to_string()))
    }
}

fn block(indent: &str, lines: &[String]) -> String {
    let mut out = format!("{indent}{BEGIN}\n");
    for line in lines {
        out.push_str(line);
        out.push('\n');
    }
    out.push_str(&format!("{indent}{END}\n"));
    out
}

/// The leading spaces of `line`.
fn indent_of(line: &str) -> &str {
    &line[..line.len() - line.trim_start_matches(' ').len()]
}

/// A line that says something (not blank, not only a comment).
fn meaningful(line: &str) -> bool {
    let t = line.trim();
    !t.is_empty() && !t.starts_with('#')
}

/// The index of the top-level `key:` line.
fn top_level(lines: &[&str], key: &str) -> Option<usize> {
    lines.iter().position(|l| {
        l.strip_prefix(key)
            .is_some_and(|rest| rest.starts_with(':'))
    })
}

/// Why a manager's configuration cannot take our entries: it is left as it is. Its text
/// (`Display`) is what the person reads after the file's path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// `repos: [...]` with items in it.
    InlineRepos,
    /// `default_install_hook_types:` neither a flow list nor a block list: the line.
    UnreadableTypes(String),
    /// A lefthook hook written inline (`pre-push: {...}`).
    InlineHook(&'static str),
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::InlineRepos => f.write_str(
                "`repos:` is written inline; write it as a block list to add hooks to it",
            ),
            Refusal::UnreadableTypes(line) => write!(f, "cannot read `{line}`"),
            Refusal::InlineHook(hook) => write!(
                f,
                "`{hook}:` is written inline; write it as a block to add a command to it"
            ),
        }
    }
}

/// `.pre-commit-config.yaml` with a `repo: local` hook per stage and the install types
/// those stages need. `program` starts git-orchestrate.
pub fn pre_commit_install(text: &str, program: &str) -> Result<String, Refusal> {
    if has_ours(text) {
        return Ok(text.to_string());
    }
    let (normalized, note) = with_final_newline(text);
    let text = with_local_repo(&normalized, program)?;
    let (text, widened_from) = match with_install_types(text, note)? {
        InstallTypes::Complete(text) => return Ok(text),
        InstallTypes::Widened { text, from } => (text, from),
    };
    // The stages the user's hooks ran at before: a hook without `stages` runs at every
    // installed type, so widening the types would run it at ours too (a linter given the
    // commit message as its file) unless `default_stages` keeps it where it was.
    let lines: Vec<&str> = text.lines().collect();
    if top_level(&lines, "default_stages").is_some() {
        return Ok(text);
    }
    let kept = format!("default_stages: [{}]", widened_from.join(", "));
    Ok(format!("{}{text}", block("", &[kept])))
}

/// One of our pre-commit hooks, as an item of the local repo's `hooks:`.
fn pre_commit_hook(program: &str, id: &str, stage: &str, files: bool) -> Vec<String> {
    // pre-commit starts an entry itself, with no shell: commit-msg and post-commit go
    // through the same fast path as the other managers' entries, so that an ordinary
    // commit starts no process of ours (a `sh` and a `grep` cost less than our start).
    let entry = match stage {
        "commit-msg" | "post-commit" => yaml_quoted(&format!(
            "sh -c '{}' git-orchestrate",
            fast_path(stage, program, "\"$1\"")
        )),
        _ => yaml_quoted(&format!(
            "sh -c '{}' git-orchestrate",
            pushed(program, "", "${PRE_COMMIT_REMOTE_NAME:-}")
        )),
    };
    let mut v = vec![
        format!("    - id: git-orchestrate-{id}"),
        format!("      name: git-orchestrate {id}"),
        format!("      entry: {entry}"),
        "      language: system".to_string(),
        format!("      stages: [{stage}]"),
        "      always_run: true".to_string(),
        // pre-commit keeps a passing hook's output to itself; ours is for the person.
        "      verbose: true".to_string(),
    ];
    if !files {
        v.push("      pass_filenames: false".to_string());
    }
    v
}

/// Our `repo: local` item of `repos:`, each line indented by `indent`.
fn pre_commit_repo(program: &str, indent: &str) -> Vec<String> {
    let mut v = vec!["- repo: local".to_string(), "  hooks:".to_string()];
    v.extend(pre_commit_hook(program, "commit-msg", "commit-msg", true));
    v.extend(pre_commit_hook(
        program,
        "post-commit",
        "post-commit",
        false,
    ));
    v.extend(pre_commit_hook(program, "pre-push", "pre-push", false));
    v.into_iter().map(|l| format!("{indent}{l}")).collect()
}

/// `text` (ending with a newline) with our repo the first item of `repos:`, which is added
/// when there is none.
fn with_local_repo(text: &str, program: &str) -> Result<String, Refusal> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out: Vec<String> = Vec::new();
    match top_level(&lines, "repos") {
        Some(i) => {
            let rest = lines[i]["repos:".len()..].trim();
            if !rest.is_empty() && !rest.starts_with('#') && rest != "[]" {
                return Err(Refusal::InlineRepos);
            }
            let item_indent = lines[i + 1..]
                .iter()
                .find(|l| meaningful(l))
                .filter(|l| l.trim_start().starts_with('-'))
                .map(|l| indent_of(l).to_string())
                .unwrap_or_else(|| "  ".to_string());
            out.extend(lines[..i].iter().map(|l| l.to_string()));
            let ours = pre_commit_repo(program, &item_indent);
            if rest == "[]" {
                let mut replaced = vec![format!("{WAS}{}", lines[i]), "repos:".to_string()];
                replaced.extend(ours);
                out.push(block("", &replaced).trim_end().to_string());
            } else {
                out.push(lines[i].to_string());
                out.push(block(&item_indent, &ours).trim_end().to_string());
            }
            out.extend(lines[i + 1..].iter().map(|l| l.to_string()));
        }
        None => {
            out.extend(lines.iter().map(|l| l.to_string()));
            let mut added = vec!["repos:".to_string()];
            added.extend(pre_commit_repo(program, "  "));
            out.push(block("", &added).trim_end().to_string());
        }
    }
    Ok(out.join("\n") + "\n")
}

/// What [`with_install_types`] made of the file.
enum InstallTypes {
    /// Every type we need was installed already: the file is done.
    Complete(String),
    /// Types were added to those the user's hooks ran at before (`from`).
    Widened { text: String, from: Vec<String> },
}

/// The install types, so that `pre-commit install` puts in the stages we need; `note` says
/// we added the file's final newline, in the first block.
fn with_install_types(text: String, note: Option<String>) -> Result<InstallTypes, Refusal> {
    let lines: Vec<&str> = text.lines().collect();
    let types = format!("[{}]", PRE_COMMIT_TYPES.join(", "));
    let first: Vec<String> = note
        .into_iter()
        .chain([format!("default_install_hook_types: {types}")])
        .collect();
    let Some(i) = top_level(&lines, "default_install_hook_types") else {
        return Ok(InstallTypes::Widened {
            text: format!("{}{text}", block("", &first)),
            from: vec!["pre-commit".to_string()],
        });
    };
    let line = lines[i];
    let rest = line["default_install_hook_types:".len()..].trim();
    let (mut merged, block_items) = listed_types(&lines, i, rest)?;
    let missing: Vec<&str> = PRE_COMMIT_TYPES
        .iter()
        .filter(|t| !merged.iter().any(|m| m == *t))
        .copied()
        .collect();
    if missing.is_empty() {
        return Ok(InstallTypes::Complete(match first.len() {
            // The newline we added needs saying, in a block of its own.
            2 => format!("{}{text}", block("", &first[..1])),
            _ => text,
        }));
    }
    let mut out: Vec<String> = lines[..i].iter().map(|l| l.to_string()).collect();
    let consumed = 1 + if rest.starts_with('[') {
        0
    } else {
        count_through(&lines[i + 1..], &block_items)
    };
    let mut replaced: Vec<String> = first[..first.len() - 1].to_vec();
    replaced.extend(lines[i..i + consumed].iter().map(|l| format!("{WAS}{l}")));
    let from = merged.clone();
    merged.extend(missing.iter().map(|m| m.to_string()));
    replaced.push(format!(
        "default_install_hook_types: [{}]",
        merged.join(", ")
    ));
    out.push(block("", &replaced).trim_end().to_string());
    out.extend(lines[i + consumed..].iter().map(|l| l.to_string()));
    Ok(InstallTypes::Widened {
        text: out.join("\n") + "\n",
        from,
    })
}

/// The types `default_install_hook_types:` (line `i`, `rest` after the colon) lists, as a
/// flow list or a block list, and a block list's lines.
fn listed_types(
    lines: &[&str],
    i: usize,
    rest: &str,
) -> Result<(Vec<String>, Vec<String>), Refusal> {
    let mut merged: Vec<String> = Vec::new();
    let mut block_items = Vec::new();
    if let Some(inner) = rest.strip_prefix('[').and_then(|r| r.split(']').next()) {
        merged.extend(
            inner
                .split(',')
                .map(|t| t.trim().to_string())
                .filter(|t| !t.is_empty()),
        );
    } else if rest.is_empty() || rest.starts_with('#') {
        for l in &lines[i + 1..] {
            if !meaningful(l) {
                continue;
            }
            match l.trim_start().strip_prefix('-') {
                Some(item) if l.starts_with(' ') || l.starts_with('-') => {
                    block_items.push(l.to_string());
                    merged.push(
                        item.split('#')
                            .next()
                            .unwrap_or_default()
                            .trim()
                            .to_string(),
                    );
                }
                _ => break,
            }
        }
    } else {
        return Err(Refusal::UnreadableTypes(lines[i].trim().to_string()));
    }
    Ok((merged, block_items))
}

/// How many lines from the start of `lines` it takes to pass every one of `items`.
fn count_through(lines: &[&str], items: &[String]) -> usize {
    let Some(last) = items.last() else {
        return 0;
    };
    lines.iter().position(|l| *l == last).map_or(0, |p| p + 1)
}

/// The shell that starts `hook commit-msg` only for a message that mentions a checkpoint,
/// and `hook post-commit` only when commit-msg left a record (or git names no index to find
/// it by), as the installed shims do: an ordinary commit starts no process of ours.
fn fast_path(hook: &str, program: &str, message: &str) -> String {
    match hook {
        "commit-msg" => format!(
            "if grep -qi checkpoint {message}; then {}; fi",
            started(program, &format!("hook commit-msg {message}"))
        ),
        _ => format!(
            "f=\"${{GIT_INDEX_FILE:+${{GIT_INDEX_FILE%/*}}/orchestrator/checkpoint-note}}\"; \
             if [ -z \"$f\" ] || [ -e \"$f\" ]; then {}; fi",
            started(program, "hook post-commit")
        ),
    }
}

/// A shell line that runs `program ARGS`: found on PATH, else at the path `hooks install`
/// recorded (the shims in hooks/ do the same: an agent's login shell or a GUI's git may run
/// hooks with a PATH that lacks it); else it fails, saying why, so that a checkpoint commit
/// nothing can check is refused. No single quote: pre-commit's entries wrap it in
/// `sh -c '…'`. The assignment cannot fail, for husky's `sh -e`.
fn started(program: &str, args: &str) -> String {
    found_else(
        program,
        args,
        &format!(
            "echo \"{program} is not on PATH, nor where git orchestrate hooks install recorded it \
             (${{git_orchestrate:-no record}}), so this checkpoint commit cannot be verified and \
             is refused; put it back on PATH, or run git orchestrate hooks install again\" >&2; \
             false"
        ),
    )
}

/// The line that runs `program hook pre-push ARGS` as [`started`] does; without the binary it
/// does what the pre-push shim in hooks/ does: it refuses only a push that carries a
/// checkpoint commit (by its trailer or its subject, in what the remote lacks) and lets any
/// other through, saying on stderr that it was not checked. `remote` is the remote's name in
/// the manager's words; git's ref lines come on stdin, or, under pre-commit (which reads them
/// itself), in its PRE_COMMIT_* variables. Every command that may fail is a condition, for
/// husky's `sh -e`.
fn pushed(program: &str, args: &str, remote: &str) -> String {
    let fallback = format!(
        "git_orchestrate_name={remote}; git_orchestrate_not=--remotes; \
         if git config \"remote.$git_orchestrate_name.url\" >/dev/null 2>&1; then \
         git_orchestrate_not=\"--remotes=$git_orchestrate_name\"; fi; \
         if [ -n \"${{PRE_COMMIT_LOCAL_BRANCH:-}}\" ]; then git_orchestrate_lines=\"$PRE_COMMIT_LOCAL_BRANCH \
         ${{PRE_COMMIT_TO_REF:-$PRE_COMMIT_LOCAL_BRANCH}} ${{PRE_COMMIT_REMOTE_BRANCH:-$PRE_COMMIT_LOCAL_BRANCH}} \
         ${{PRE_COMMIT_FROM_REF:-0}}\"; else git_orchestrate_lines=$(cat); fi; \
         echo \"$git_orchestrate_lines\" | {{ git_orchestrate_found=; \
         while read -r git_orchestrate_lref git_orchestrate_local git_orchestrate_rref git_orchestrate_old; do \
         case \"$git_orchestrate_local\" in *[!0]*) ;; *) continue ;; esac; \
         case \"$git_orchestrate_rref\" in refs/orchestrator/* | refs/notes/*) continue ;; esac; \
         git_orchestrate_range=$git_orchestrate_local; \
         case \"$git_orchestrate_old\" in *[!0]*) if git cat-file -e \"$git_orchestrate_old^0\" 2>/dev/null; \
         then git_orchestrate_range=\"$git_orchestrate_old..$git_orchestrate_local\"; fi ;; esac; \
         if git log --format=%H --grep=\"^Orchestrator-Checkpoint:\" \"$git_orchestrate_range\" --not \
         \"$git_orchestrate_not\" | grep -q . || git log --format=%s \"$git_orchestrate_range\" --not \
         \"$git_orchestrate_not\" | grep -q \"^[[:space:]]*checkpoint:\"; then \
         git_orchestrate_found=$git_orchestrate_rref; fi; done; \
         if [ -n \"$git_orchestrate_found\" ]; then echo \"{program} is not on PATH, nor where git \
         orchestrate hooks install recorded it (${{git_orchestrate:-no record}}), so the checkpoint \
         commits of this push (to $git_orchestrate_found) cannot be checked: the push is refused; put \
         it back on PATH, or run git orchestrate hooks install again\" >&2; false; \
         else echo \"{program} is not on PATH, nor where git orchestrate hooks install recorded it \
         (${{git_orchestrate:-no record}}): this push has no checkpoint commit, so it goes through \
         unchecked\" >&2; [ -z \"${{GIT_ORCHESTRATE_HOOK_PROBE:-}}\" ]; fi; }}"
    );
    let args = format!(
        "hook pre-push{}{args}",
        if args.is_empty() { "" } else { " " }
    );
    found_else(program, &args, &fallback)
}

/// Runs `program ARGS` found on PATH or where `hooks install` recorded it, else `otherwise`.
fn found_else(program: &str, args: &str, otherwise: &str) -> String {
    format!(
        "git_orchestrate=$(command -v {program} || cat \"$(git rev-parse --git-common-dir)/{record}\" \
         2>/dev/null || :); if [ -x \"$git_orchestrate\" ]; then \"$git_orchestrate\" {args}; \
         else {otherwise}; fi",
        record = super::BINARY_RECORD,
    )
}

/// The lefthook command of one hook. `config` is the configuration file's name.
fn lefthook_command(hook: &str, program: &str, config: &str) -> Vec<String> {
    let mut v = vec!["git-orchestrate:".to_string()];
    match hook {
        "commit-msg" | "post-commit" => v.push(format!(
            "  run: {}",
            yaml_quoted(&fast_path(hook, program, "{1}"))
        )),
        _ => {
            // lefthook skips a pre-push command when HEAD has no "push files" against its
            // upstream, whatever is being pushed (`git push origin other-branch` from an
            // up-to-date main; a push of empty commits). A command with a `files` list that
            // names a file (its own configuration, which exists) and uses it is always run;
            // the list goes into a shell comment.
            v.push(format!("  files: echo {config}"));
            v.push(format!(
                "  run: {}",
                yaml_quoted(&format!(
                    "{} # {{files}}",
                    pushed(program, "{1} {2}", "{1}")
                ))
            ));
            v.push("  use_stdin: true".to_string());
        }
    }
    v
}

/// `text` as a YAML double-quoted scalar.
fn yaml_quoted(text: &str) -> String {
    format!("\"{}\"", text.replace('\\', "\\\\").replace('"', "\\\""))
}

/// `lefthook.yml` with a `git-orchestrate` command under each of our hooks.
pub fn lefthook_install(text: &str, program: &str, config: &str) -> Result<String, Refusal> {
    if has_ours(text) {
        return Ok(text.to_string());
    }
    let (normalized, note) = with_final_newline(text);
    let newline_at_end = true;
    let mut lines: Vec<String> = normalized.lines().map(str::to_string).collect();
    let mut appended: Vec<String> = note.into_iter().collect();
    for hook in super::NAMES {
        let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
        let Some(i) = top_level(&refs, hook) else {
            appended.push(format!("{hook}:"));
            appended.push("  commands:".to_string());
            appended.extend(
                lefthook_command(hook, program, config)
                    .into_iter()
                    .map(|l| format!("    {l}")),
            );
            continue;
        };
        if !lines[i][hook.len() + 1..].trim().is_empty()
            && !lines[i][hook.len() + 1..].trim().starts_with('#')
        {
            return Err(Refusal::InlineHook(hook));
        }
        // The hook's own block: the lines indented under it.
        let end = (i + 1..lines.len())
            .find(|&j| meaningful(&lines[j]) && !lines[j].starts_with(' '))
            .unwrap_or(lines.len());
        let child = (i + 1..end)
            .find(|&j| meaningful(&lines[j]))
            .map(|j| indent_of(&lines[j]).to_string())
            .unwrap_or_else(|| "  ".to_string());
        let commands = (i + 1..end).find(|&j| lines[j] == format!("{child}commands:"));
        let (at, inserted) = match commands {
            Some(c) => {
                let grandchild = (c + 1..end)
                    .find(|&j| meaningful(&lines[j]))
                    .map(|j| indent_of(&lines[j]).to_string())
                    .filter(|g| g.len() > child.len())
                    .unwrap_or_else(|| format!("{child}{child}"));
                let body: Vec<String> = lefthook_command(hook, program, config)
                    .into_iter()
                    .map(|l| format!("{grandchild}{l}"))
                    .collect();
                (c + 1, block(&grandchild, &body))
            }
            None => {
                let mut body = vec![format!("{child}commands:")];
                body.extend(
                    lefthook_command(hook, program, config)
                        .into_iter()
                        .map(|l| format!("{child}{child}{l}")),
                );
                (i + 1, block(&child, &body))
            }
        };
        let inserted: Vec<String> = inserted.trim_end().lines().map(str::to_string).collect();
        lines.splice(at..at, inserted);
    }
    if appended.iter().any(|l| l != ADDED_NEWLINE) || appended.len() == 1 {
        lines.push(block("", &appended).trim_end().to_string());
    }
    let mut text = lines.join("\n");
    if newline_at_end {
        text.push('\n');
    }
    Ok(text)
}

/// `.husky/<hook>` with our command: last for commit-msg and post-commit (after the user's
/// own, which may edit the message), first for pre-push (which reads git's ref lines on
/// stdin).
pub fn husky_install(hook: &str, text: Option<&str>, program: &str) -> String {
    let text = text.unwrap_or_default();
    if has_ours(text) {
        return text.to_string();
    }
    let command = match hook {
        "commit-msg" | "post-commit" => fast_path(hook, program, "\"$1\""),
        _ => pushed(program, "\"$@\"", "$1"),
    };
    let (text, note) = with_final_newline(text);
    let ours = block("", &note.into_iter().chain([command]).collect::<Vec<_>>());
    if hook == "pre-push" {
        match text.split_once('\n') {
            Some((first, rest)) if first.starts_with("#!") => format!("{first}\n{ours}{rest}"),
            _ => format!("{ours}{text}"),
        }
    } else {
        format!("{text}{ours}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    const PRE_COMMIT: &str = "# my hooks\nrepos:\n  - repo: local\n    hooks:\n      - id: lint\n        name: lint\n        entry: ./lint.sh\n        language: system\n";

    #[test]
    fn pre_commit_gets_a_local_repo_and_the_stages_and_loses_exactly_them() {
        let added = pre_commit_install(PRE_COMMIT, "git-orchestrate").unwrap();
        assert!(added.starts_with("# >>> git-orchestrate >>>\ndefault_stages: [pre-commit]\n# <<< git-orchestrate <<<\n# >>> git-orchestrate >>>\ndefault_install_hook_types: [pre-commit, commit-msg, post-commit, pre-push]\n# <<< git-orchestrate <<<\n# my hooks\nrepos:\n  # >>> git-orchestrate >>>\n  - repo: local\n    hooks:\n      - id: git-orchestrate-commit-msg\n"), "{added}");
        assert!(added.contains("      - id: lint"), "{added}");
        let entry = format!(
            "entry: {}\n",
            yaml_quoted(&format!(
                "sh -c '{}' git-orchestrate",
                pushed("git-orchestrate", "", "${PRE_COMMIT_REMOTE_NAME:-}")
            ))
        );
        assert!(added.contains(&entry), "{added}");
        assert_eq!(
            pre_commit_install(&added, "git-orchestrate").unwrap(),
            added
        );
        assert_eq!(remove_ours(&added), PRE_COMMIT);
        // An install-types line of the user's is widened, and comes back as it was.
        let with_types =
            format!("default_install_hook_types: [pre-commit, pre-merge-commit]\n{PRE_COMMIT}");
        let added = pre_commit_install(&with_types, "git-orchestrate").unwrap();
        assert!(added.contains("default_install_hook_types: [pre-commit, pre-merge-commit, commit-msg, post-commit, pre-push]"), "{added}");
        // The user's hooks without `stages` stay at the stages they ran at.
        assert!(
            added.contains("\ndefault_stages: [pre-commit, pre-merge-commit]\n"),
            "{added}"
        );
        assert_eq!(remove_ours(&added), with_types);
        let block_types =
            format!("default_install_hook_types:\n  - pre-commit\n  - commit-msg\n{PRE_COMMIT}");
        let added = pre_commit_install(&block_types, "git-orchestrate").unwrap();
        assert!(
            added.contains(
                "default_install_hook_types: [pre-commit, commit-msg, post-commit, pre-push]"
            ),
            "{added}"
        );
        assert_eq!(remove_ours(&added), block_types);
        assert!(
            added.contains("\ndefault_stages: [pre-commit, commit-msg]\n"),
            "{added}"
        );
        // A `default_stages` of the user's is theirs.
        let with_stages = format!("default_stages: [pre-push]\n{PRE_COMMIT}");
        let added = pre_commit_install(&with_stages, "git-orchestrate").unwrap();
        assert_eq!(added.matches("default_stages").count(), 1, "{added}");
        assert_eq!(remove_ours(&added), with_stages);
        // A file with nothing yet, and one written inline.
        let fresh = pre_commit_install("", "git-orchestrate").unwrap();
        assert!(fresh.contains("repos:\n  - repo: local"), "{fresh}");
        assert_eq!(remove_ours(&fresh), "");
        assert!(pre_commit_install("repos: [{repo: local, hooks: []}]\n", "x").is_err());
    }

    const LEFTHOOK: &str = "pre-commit:\n  parallel: true\n  commands:\n    lint:\n      run: npm run lint\ncommit-msg:\n  commands:\n    commitlint:\n      run: npx commitlint --edit {1}\n";

    #[test]
    fn lefthook_gets_a_command_under_each_hook_and_loses_exactly_them() {
        let added = lefthook_install(LEFTHOOK, "git-orchestrate", "lefthook.yml").unwrap();
        let run = |hook: &str, args: &str| {
            format!(
                "      run: {}\n",
                yaml_quoted(&match hook {
                    "pre-push" => format!("{} # {{files}}", pushed("git-orchestrate", args, "{1}")),
                    _ => fast_path(hook, "git-orchestrate", "{1}"),
                })
            )
        };
        assert_eq!(
            added,
            format!(
                "pre-commit:\n  parallel: true\n  commands:\n    lint:\n      run: npm run lint\ncommit-msg:\n  commands:\n    # >>> git-orchestrate >>>\n    git-orchestrate:\n{}    # <<< git-orchestrate <<<\n    commitlint:\n      run: npx commitlint --edit {{1}}\n# >>> git-orchestrate >>>\npost-commit:\n  commands:\n    git-orchestrate:\n{}pre-push:\n  commands:\n    git-orchestrate:\n      files: echo lefthook.yml\n{}      use_stdin: true\n# <<< git-orchestrate <<<\n",
                run("commit-msg", ""),
                run("post-commit", ""),
                run("pre-push", "{1} {2}"),
            )
        );
        assert_eq!(
            fast_path("commit-msg", "git-orchestrate", "{1}"),
            format!(
                "if grep -qi checkpoint {{1}}; then {}; fi",
                started("git-orchestrate", "hook commit-msg {1}")
            )
        );
        assert_eq!(
            fast_path("post-commit", "git-orchestrate", "{1}"),
            format!(
                "f=\"${{GIT_INDEX_FILE:+${{GIT_INDEX_FILE%/*}}/orchestrator/checkpoint-note}}\"; \
                 if [ -z \"$f\" ] || [ -e \"$f\" ]; then {}; fi",
                started("git-orchestrate", "hook post-commit")
            )
        );
        assert_eq!(
            lefthook_install(&added, "git-orchestrate", "lefthook.yml").unwrap(),
            added
        );
        assert_eq!(remove_ours(&added), LEFTHOOK);
        let jobs = "post-commit:\n  jobs:\n    - run: echo hi\n";
        let added = lefthook_install(jobs, "g", "lefthook.yml").unwrap();
        assert!(added.starts_with("post-commit:\n  # >>> git-orchestrate >>>\n  commands:\n    git-orchestrate:\n      run: \"f="), "{added}");
        assert!(
            added.contains(
                "hooks install again\\\" >&2; false; fi; fi\"\n  # <<< git-orchestrate <<<\n  jobs:"
            ),
            "{added}"
        );
        assert_eq!(remove_ours(&added), jobs);
    }

    #[test]
    fn husky_files_get_one_line_each_where_it_belongs() {
        assert_eq!(
            husky_install(
                "commit-msg",
                Some("npx commitlint --edit \"$1\"\n"),
                "git-orchestrate"
            ),
            format!(
                "npx commitlint --edit \"$1\"\n# >>> git-orchestrate >>>\nif grep -qi checkpoint \"$1\"; then {}; fi\n# <<< git-orchestrate <<<\n",
                started("git-orchestrate", "hook commit-msg \"$1\"")
            )
        );
        assert_eq!(
            husky_install("pre-push", Some("#!/bin/sh\nnpm test\n"), "g"),
            format!(
                "#!/bin/sh\n# >>> git-orchestrate >>>\n{}\n# <<< git-orchestrate <<<\nnpm test\n",
                pushed("g", "\"$@\"", "$1")
            )
        );
        // On PATH, else where `hooks install` recorded it, else a refusal that says why.
        assert_eq!(
            started("git-orchestrate", "hook commit-msg {1}"),
            "git_orchestrate=$(command -v git-orchestrate || cat \"$(git rev-parse \
             --git-common-dir)/orchestrator/binary\" 2>/dev/null || :); if [ -x \
             \"$git_orchestrate\" ]; then \"$git_orchestrate\" hook commit-msg {1}; else echo \
             \"git-orchestrate is not on PATH, nor where git orchestrate hooks install recorded \
             it (${git_orchestrate:-no record}), so this checkpoint commit cannot be verified and \
             is refused; put it back on PATH, or run git orchestrate hooks install again\" >&2; \
             false; fi"
        );
        assert!(!pushed("g", "", "${PRE_COMMIT_REMOTE_NAME:-}").contains('\''));
        let created = husky_install("post-commit", None, "g");
        assert_eq!(remove_ours(&created), "");
        let user = "npm test";
        assert_eq!(
            remove_ours(&husky_install("commit-msg", Some(user), "g")),
            user
        );
        assert_eq!(
            remove_ours(&husky_install("pre-push", Some(user), "g")),
            user
        );
        let yaml = "pre-commit:\n  commands:\n    a:\n      run: x";
        assert_eq!(
            remove_ours(&lefthook_install(yaml, "g", "lefthook.yml").unwrap()),
            yaml
        );
        let yaml = "repos:\n- repo: local\n  hooks: []";
        assert_eq!(remove_ours(&pre_commit_install(yaml, "g").unwrap()), yaml);
    }
}
