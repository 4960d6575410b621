//! What the guard protects, declared once: the git directory's parts, the refs, the files,
//! the git settings and environment variables that change what git runs or reads, the
//! human-only commands; and the typed reason a command is refused, rendered once.

use std::fmt;

use crate::product::{ROLE_ENV, Role};

/// Why a command is refused: the rule it breaks and the word that breaks it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reason {
    pub rule: Rule,
    /// The word, path, option, setting or variable at fault, as the command wrote it.
    pub word: String,
}

impl Reason {
    pub fn new(rule: Rule, word: impl Into<String>) -> Reason {
        Reason {
            rule,
            word: word.into(),
        }
    }
}

/// Which part of a command the guard cannot know.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unknown {
    /// The program run.
    Program,
    /// A file written, moved or deleted.
    Target,
    /// A script or program text a shell or interpreter runs.
    Script,
    /// An argument of git that is not an option's value.
    GitArgument,
    /// A ref a push or fetch writes.
    Refspec,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Setting {
    /// `core.hooksPath`.
    HooksPath,
    /// `include.*`, `includeIf.*`.
    Include,
    /// `alias.*`.
    Alias,
    /// `core.fsmonitor`, `filter.*`, `core.worktree`, `extensions.worktreeConfig`: what git
    /// runs or reads.
    RunsOrReads,
    /// `gc.reflogExpire*`, `core.logAllRefUpdates`: the reflog `audit` reads.
    Reflog,
    /// `remote.*.push|fetch|mirror`, `push.default`, `branch.*.merge|pushRemote`.
    Refspecs,
    /// `core.notesRef`.
    NotesRef,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variable {
    /// `GIT_ORCHESTRATE_HUMAN`.
    Human,
    /// `GIT_ORCHESTRATE_ROLE`: the ticket role a call is made in.
    Role,
    /// `PATH` set other than by appending.
    Path,
    /// A `GIT_*` variable that changes what git runs or reads.
    Git,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MainMove {
    /// A commit, merge, cherry-pick… while HEAD is on main.
    Commit,
    Push,
    /// A branch, reset, checkout -B, rebase or worktree that moves or checks out main.
    Move,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Rule {
    /// The shell would refuse the line too.
    Unreadable,
    /// The tool call itself is malformed; the word says how.
    Input,
    /// Nested deeper, or more paths, than the guard follows.
    TooMuch,
    Unknowable(Unknown),
    /// The preflight gate's own command (the gate, as configured).
    GateCommand(String),
    SkipsHooks,
    Setting(Setting),
    Variable(Variable),
    /// The hooks or the orchestrator's state in the git directory.
    GitInternals,
    /// A client's settings that hold the guard and the hooks.
    AgentSettings,
    /// A protected path (docs/integrity.md).
    Protected,
    /// A ref the orchestrator keeps: `refs/orchestrator/*`, its notes, `refs/replace/*`.
    OrchestratorRef,
    MainBranch(MainMove),
    HumanOnly,
    /// A ticket tool or `--role` of another role than the session's (the session's role).
    OtherRole(Role),
    /// `reflog expire|delete`, `gc` with the reflog expired.
    ReflogErase,
    /// A commit or ref made where no hook sees it (`commit-tree`, `fast-import`).
    Unhooked,
    /// An archive unpacked where it may write the hooks or a protected path.
    Archive,
    /// A link made to the git directory or a protected path.
    Link,
}

const USE_SUBMIT: &str = "the orchestrator runs the tests and gates: use `git orchestrate submit-work --test-command …` (MCP: submit_work)";
const USE_CHECKPOINT: &str = "make checkpoint commits with `git orchestrate checkpoint` (MCP: checkpoint), which runs preflight";
const HUMAN_ROUTE: &str = "only a human answers the workflow; if you are stuck, use `git orchestrate escalate --report FILE` (MCP: escalate_for_external_help)";
const STATE_ROUTE: &str = "the workflow's state belongs to the orchestrator; use `git orchestrate get-task` and `submit-work` to move it";
const PROTECTED_ROUTE: &str = "the gates that judge your work, and the files they run, change only on the main branch, by a human; if it must change, say why in `git orchestrate escalate --report FILE`";

impl Unknown {
    /// What the guard cannot tell when it cannot tell what the word is.
    fn consequence(self) -> &'static str {
        match self {
            Unknown::Program => "the program it runs",
            Unknown::Target => {
                "which file it writes, moves or deletes, and it may be the hooks or a protected path"
            }
            Unknown::Script => "the script it runs",
            Unknown::GitArgument => "what git is asked to do",
            Unknown::Refspec => {
                "which refs it writes, and one may be the main branch or the orchestrator's"
            }
        }
    }
}

impl Setting {
    /// Why changing the setting is refused, and what to do instead.
    fn why(self) -> String {
        match self {
            Setting::HooksPath => format!("it bypasses the installed hooks: {USE_CHECKPOINT}"),
            Setting::Include => format!(
                "it includes a configuration the guard cannot see (it may move core.hooksPath): {USE_CHECKPOINT}"
            ),
            Setting::Alias => {
                "a git alias hides the command it runs from the guard; run the command itself".into()
            }
            Setting::RunsOrReads => format!(
                "it changes what git runs or reads (a filter, a monitor, another work tree or configuration): {STATE_ROUTE}"
            ),
            Setting::Reflog => {
                format!("it expires the reflog that `git orchestrate audit` checks: {STATE_ROUTE}")
            }
            Setting::Refspecs => "it changes which refs a push or fetch moves (the main branch's and the orchestrator's among them); push the PR branch by name, and `git orchestrate sync` moves the workflow".into(),
            Setting::NotesRef => format!(
                "it points git notes at another notes ref, and refs/notes/orchestrator is the orchestrator's: {STATE_ROUTE}"
            ),
        }
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let w = &self.word;
        match &self.rule {
            Rule::Unreadable => write!(
                f,
                "the command line cannot be read ({w}); the shell would refuse it too"
            ),
            Rule::Input => write!(f, "{w}"),
            Rule::TooMuch => write!(
                f,
                "{w}: more than the guard follows in one command; split it into smaller commands"
            ),
            Rule::Unknowable(what) => write!(
                f,
                "the guard cannot tell what `{w}` is, so it cannot tell {}; write the value out in the command itself",
                what.consequence()
            ),
            Rule::GateCommand(gate) => write!(
                f,
                "`{w}` is the preflight gate's command ({gate}); {USE_SUBMIT}"
            ),
            Rule::SkipsHooks => write!(
                f,
                "`{w}` (--no-verify) skips the hooks that enforce preflight: {USE_CHECKPOINT}"
            ),
            Rule::Setting(setting) => write!(f, "changing {w}: {}", setting.why()),
            Rule::Variable(Variable::Human) => write!(
                f,
                "setting {w} is for humans at their own terminal: {HUMAN_ROUTE}"
            ),
            Rule::Variable(Variable::Role) => write!(
                f,
                "setting {w} chooses the ticket role a git-orchestrate call is made in, and this session's role is fixed by whoever started it (`git orchestrate run`, the MCP server's --role): use your own role's tools; `git orchestrate get-task` says which"
            ),
            Rule::Variable(Variable::Path) => write!(
                f,
                "`{w}` changes which programs the names in later commands run, so the guard could not tell what runs; run a program by its path, or append: PATH=\"$PATH:DIR\""
            ),
            Rule::Variable(Variable::Git) => write!(
                f,
                "setting {w} changes what git runs or reads (hooks, configuration, refs, objects): {USE_CHECKPOINT}"
            ),
            Rule::GitInternals => write!(
                f,
                "{w} is, or holds, the hooks or the orchestrator's state in the git directory: {STATE_ROUTE}"
            ),
            Rule::AgentSettings => write!(
                f,
                "{w} is an agent's settings, where `git orchestrate init --agent` put this guard and the Stop hook; a human changes them"
            ),
            Rule::Protected => write!(f, "{w} is protected (docs/integrity.md): {PROTECTED_ROUTE}"),
            Rule::OrchestratorRef => write!(
                f,
                "`{w}` writes a ref the orchestrator keeps (its workflows, its notes, replace objects): {STATE_ROUTE}; `git orchestrate sync` moves them between clones"
            ),
            Rule::MainBranch(MainMove::Commit) => write!(
                f,
                "`{w}` on the main branch changes it; the orchestrator merges PRs into main after review: work on the PR branch (`git orchestrate get-task`)"
            ),
            Rule::MainBranch(MainMove::Push) => write!(
                f,
                "pushing the main branch (`{w}`) is the orchestrator's merge, after review; `git orchestrate sync` pushes the PR branch and the workflow"
            ),
            Rule::MainBranch(MainMove::Move) => write!(
                f,
                "`{w}` moves or checks out the main branch; it is not the agent's to do: the orchestrator merges into it"
            ),
            Rule::HumanOnly => write!(f, "`{w}` is for humans: {HUMAN_ROUTE}"),
            Rule::OtherRole(role) => write!(
                f,
                "`{w}` acts as another ticket role, and this session is the {}: {}",
                role.as_str(),
                role_route(*role)
            ),
            Rule::ReflogErase => write!(
                f,
                "`{w}` erases the history `git orchestrate audit` checks: {STATE_ROUTE}"
            ),
            Rule::Unhooked => write!(
                f,
                "`{w}` makes commits or refs no hook sees: {USE_CHECKPOINT}"
            ),
            Rule::Archive => write!(
                f,
                "the guard cannot see what `{w}` unpacks, and here it may write the hooks or a protected path; unpack it outside the repository (`-C /tmp/…`) and copy what you need"
            ),
            Rule::Link => write!(
                f,
                "`{w}` makes a link to the git directory or a protected path, through which later writes reach it unseen: {STATE_ROUTE}"
            ),
        }
    }
}

/// The parts of the git directory a write may not touch (the first path components): the
/// hooks, the workflow's state, the refs and objects, the configuration git reads.
pub const GIT_DIR_GUARDED: &[&str] = &[
    "hooks",
    "orchestrator",
    "refs",
    "logs",
    "packed-refs",
    "config",
    "config.worktree",
    "HEAD",
    "objects",
    "worktrees",
    "commondir",
    "info/attributes",
    "info/grafts",
    "shallow",
];

/// The clients' settings that hold the hooks and the MCP server (`init --agent`), in the
/// project or the user's home: an agent that rewrites them switches its own guard off.
pub const AGENT_SETTINGS: &[&str] = &[
    ".claude/settings.json",
    ".claude/settings.local.json",
    ".mcp.json",
    ".codex/config.toml",
    ".codex/hooks.json",
    ".gemini/settings.json",
];

/// The user's own git configuration (it can move core.hooksPath for every repository).
pub const USER_GIT_CONFIG: &[&str] = &[".gitconfig", ".config/git/config"];

/// What in a command's text names the git internals the orchestrator relies on.
pub const GIT_INTERNAL_NAMES: &[&str] = &[
    ".git/hooks",
    ".git/orchestrator",
    ".git/refs/orchestrator",
    ".git/refs/notes/orchestrator",
    ".git/refs/replace",
    ".git/logs/refs/orchestrator",
    ".git/packed-refs",
    ".git/config",
    ".git/info/attributes",
    ".git/info/grafts",
    ".git/worktrees",
    ".git/refs/heads",
    ".git/HEAD",
    ".git/objects/info",
    ".git/logs",
];

/// Program text that spawns a pseudo-terminal: what a human-only command's terminal check
/// takes for a person.
pub const PTY_MARKERS: &[&str] = &[
    "import pty",
    "from pty",
    "pty.spawn",
    "openpty",
    "forkpty",
    "pexpect",
    "node-pty",
    "IO::Pty",
    "require 'pty'",
    "require \"pty\"",
    "PTY.spawn",
    "posix_openpt",
    "/dev/ptmx",
];

/// The refs the orchestrator keeps, as prefixes.
pub const ORCHESTRATOR_REFS: &[&str] = &[
    "refs/orchestrator/",
    "refs/notes/orchestrator",
    "refs/replace/",
];

/// `git orchestrate` subcommands only a human runs.
pub const HUMAN_COMMANDS: &[&str] = &["approve", "reject", "resume", "repin"];

pub const HUMAN_VARIABLE: &str = "GIT_ORCHESTRATE_HUMAN";

/// Why setting this git configuration key (case-insensitive) goes around the workflow.
pub fn risky_setting(key: &str) -> Option<Setting> {
    let key = key.trim_matches(['\'', '"']).to_ascii_lowercase();
    let key = key.as_str();
    let (section, rest) = key.split_once('.').unwrap_or((key, ""));
    let last = rest.rsplit('.').next().unwrap_or_default();
    Some(match section {
        "core" if rest.starts_with("hookspath") => Setting::HooksPath,
        "core"
            if matches!(
                rest,
                "fsmonitor" | "worktree" | "bare" | "attributesfile" | "alternaterefscommand"
            ) =>
        {
            Setting::RunsOrReads
        }
        "core" if rest == "notesref" => Setting::NotesRef,
        "core" if rest == "logallrefupdates" => Setting::Reflog,
        "include" | "includeif" => Setting::Include,
        "alias" => Setting::Alias,
        "filter" | "diff" | "merge" | "sequence" | "gpg" | "credential" | "uploadpack"
        | "receive" | "protocol" | "url" | "extensions"
            if !matches!(
                (section, last),
                (
                    "merge",
                    "conflictstyle" | "ff" | "log" | "stat" | "renames" | "tool"
                ) | (
                    "diff",
                    "algorithm"
                        | "colormoved"
                        | "renames"
                        | "mnemonicprefix"
                        | "noprefix"
                        | "context"
                        | "indentheuristic"
                        | "statgraphwidth"
                        | "submodule"
                        | "wserrorhighlight"
                        | "color"
                ) | ("url", _)
            ) =>
        {
            Setting::RunsOrReads
        }
        "gc" if rest.starts_with("reflogexpire") || rest == "pruneexpire" => Setting::Reflog,
        "init" if rest == "templatedir" => Setting::RunsOrReads,
        "remote" if matches!(last, "uploadpack" | "receivepack" | "vcs") => Setting::RunsOrReads,
        "push" if rest == "default" => Setting::Refspecs,
        "remote" if matches!(last, "push" | "fetch" | "mirror") => Setting::Refspecs,
        "branch" if matches!(last, "merge" | "pushremote") => Setting::Refspecs,
        "notes" if matches!(last, "rewriteref" | "displayref") => Setting::NotesRef,
        _ => return None,
    })
}

/// Environment variables git reads that change nothing the workflow relies on; every other
/// `GIT_*` is refused. An editor or pager runs a program: those are judged as commands.
pub const HARMLESS_GIT_VARIABLES: &[&str] = &[
    "GIT_AUTHOR_NAME",
    "GIT_AUTHOR_EMAIL",
    "GIT_AUTHOR_DATE",
    "GIT_COMMITTER_NAME",
    "GIT_COMMITTER_EMAIL",
    "GIT_COMMITTER_DATE",
    "GIT_TERMINAL_PROMPT",
    "GIT_MERGE_AUTOEDIT",
    "GIT_PAGER",
    "GIT_EDITOR",
    "GIT_SEQUENCE_EDITOR",
    "GIT_OPTIONAL_LOCKS",
    "GIT_PROGRESS_DELAY",
    "GIT_FLUSH",
    "GIT_ADVICE",
    "GIT_COLOR",
    "GIT_LFS_SKIP_SMUDGE",
    "GIT_SSL_NO_VERIFY",
    "GIT_HTTP_LOW_SPEED_LIMIT",
    "GIT_HTTP_LOW_SPEED_TIME",
    "GIT_DEFAULT_HASH",
];

/// Variables whose value is a command git runs: judged as one.
pub const COMMAND_VARIABLES: &[&str] = &["GIT_PAGER", "GIT_EDITOR", "GIT_SEQUENCE_EDITOR"];

/// Why setting environment variable `name` is refused (the value as the guard knows it, if
/// it does). `None`: harmless.
pub fn risky_variable(name: &str, value: Option<&str>) -> Option<Variable> {
    if name == HUMAN_VARIABLE {
        return Some(Variable::Human);
    }
    if name == ROLE_ENV {
        return Some(Variable::Role);
    }
    // Where `cd` looks, and where git finds the user's configuration.
    if name == "CDPATH" {
        return Some(Variable::Path);
    }
    if matches!(name, "HOME" | "XDG_CONFIG_HOME") {
        return Some(Variable::Git);
    }
    if name == "PATH" {
        // Appending cannot put another program in front of one a name runs already.
        let appends = value.is_some_and(|v| {
            (v.starts_with("$PATH:") || v.starts_with("${PATH}:")) && !v[5..].contains("$PATH")
        });
        return (!appends).then_some(Variable::Path);
    }
    if name.starts_with("GIT_TRACE") || HARMLESS_GIT_VARIABLES.contains(&name) {
        return None;
    }
    // `GIT_CONFIG_KEY_n`/`GIT_CONFIG_PARAMETERS` are judged by the settings they make.
    if name.starts_with("GIT_CONFIG_KEY_")
        || name.starts_with("GIT_CONFIG_VALUE_")
        || name == "GIT_CONFIG_COUNT"
        || name == "GIT_CONFIG_PARAMETERS"
    {
        return None;
    }
    if name.starts_with("GIT_")
        || matches!(name, "LD_PRELOAD" | "LD_LIBRARY_PATH" | "BASH_ENV" | "ENV")
    {
        return Some(Variable::Git);
    }
    None
}

/// A human-only command named in program text (a pty spawner's argument, a one-liner):
/// `orchestrate` and then, within a few separators, one of the human-only subcommands.
pub fn names_human_command(text: &str) -> Option<String> {
    if text.contains(HUMAN_VARIABLE) {
        return Some(HUMAN_VARIABLE.to_string());
    }
    let mut rest = text;
    while let Some(at) = rest.find("orchestrate") {
        let after = &rest[at + "orchestrate".len()..];
        let gap = after
            .char_indices()
            .find(|(_, c)| c.is_ascii_alphanumeric())
            .map_or(after.len(), |(i, _)| i);
        if (1..=6).contains(&gap) {
            let word: String = after[gap..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                .collect();
            if HUMAN_COMMANDS.contains(&word.as_str())
                || (word == "hooks" && soon_after(&after[gap..], &["uninstall"]))
                || (word == "claim" && soon_after(&after[gap..], &["release", "steal"]))
            {
                return Some(format!("git orchestrate {word}"));
            }
        }
        rest = after;
    }
    None
}

/// What a session playing `role` does instead of the other role's work.
fn role_route(role: Role) -> &'static str {
    match role {
        Role::Developer => {
            "the manager assigns, verifies and completes; you report your committed work with `git orchestrate subtask-complete` (MCP: subtask_complete), and `git orchestrate get-task` gives your assignment"
        }
        Role::Manager => {
            "the developer reports its own work; you assign with `git orchestrate assign` (MCP: assign_to_developer), verify with `update-subtask` (MCP: update_subtask) and finish with `complete-ticket` (MCP: complete_ticket)"
        }
    }
}

/// In program text (a one-liner, a pty spawner's script): `GIT_ORCHESTRATE_ROLE` given a
/// value (`=` or `:` after the name, past quotes and brackets: `os.environ["…"] = …`,
/// `env={"…": …}`), or, for a session playing `role`, a `git orchestrate` tool of the
/// other role.
pub fn names_role_change(text: &str, role: Option<Role>) -> Option<Reason> {
    let mut rest = text;
    while let Some(at) = rest.find(ROLE_ENV) {
        let after =
            rest[at + ROLE_ENV.len()..].trim_start_matches(['"', '\'', ']', ')', ' ', '\t']);
        if (after.starts_with('=') && !after.starts_with("==")) || after.starts_with(':') {
            return Some(Reason::new(Rule::Variable(Variable::Role), ROLE_ENV));
        }
        rest = &rest[at + ROLE_ENV.len()..];
    }
    let role = role?;
    let mut rest = text;
    while let Some(at) = rest.find("orchestrate") {
        let after = &rest[at + "orchestrate".len()..];
        let gap = after
            .char_indices()
            .find(|(_, c)| c.is_ascii_alphanumeric())
            .map_or(after.len(), |(i, _)| i);
        if (1..=6).contains(&gap) {
            let word: String = after[gap..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                .collect();
            if crate::product::ticket_command_role(&word).is_some_and(|owner| owner != role) {
                return Some(Reason::new(
                    Rule::OtherRole(role),
                    format!("git orchestrate {word}"),
                ));
            }
        }
        rest = after;
    }
    None
}

/// True when one of `words` starts within the first 64 bytes of `text`.
fn soon_after(text: &str, words: &[&str]) -> bool {
    text.char_indices()
        .take_while(|(i, _)| *i < 64)
        .any(|(i, _)| words.iter().any(|w| text[i..].starts_with(w)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_are_classified_case_blind() {
        assert_eq!(risky_setting("core.hooksPath"), Some(Setting::HooksPath));
        assert_eq!(risky_setting("CORE.HOOKSPATH"), Some(Setting::HooksPath));
        assert_eq!(
            risky_setting("filter.lfs.clean"),
            Some(Setting::RunsOrReads)
        );
        assert_eq!(
            risky_setting("extensions.worktreeConfig"),
            Some(Setting::RunsOrReads)
        );
        assert_eq!(
            risky_setting("gc.reflogExpireUnreachable"),
            Some(Setting::Reflog)
        );
        assert_eq!(
            risky_setting("includeIf.gitdir:/x.path"),
            Some(Setting::Include)
        );
        assert_eq!(risky_setting("remote.origin.push"), Some(Setting::Refspecs));
        assert_eq!(risky_setting("user.name"), None);
        assert_eq!(risky_setting("merge.conflictStyle"), None);
        assert_eq!(risky_setting("pull.rebase"), None);
    }

    #[test]
    fn variables_are_classified() {
        assert_eq!(risky_variable("PATH", Some("$PATH:/x")), None);
        assert_eq!(
            risky_variable("PATH", Some("/x:$PATH")),
            Some(Variable::Path)
        );
        assert_eq!(risky_variable("PATH", None), Some(Variable::Path));
        assert_eq!(
            risky_variable("GIT_EXEC_PATH", Some("/x")),
            Some(Variable::Git)
        );
        assert_eq!(risky_variable("GIT_AUTHOR_NAME", Some("x")), None);
        assert_eq!(risky_variable("GIT_TRACE2", Some("1")), None);
        assert_eq!(risky_variable("RUST_BACKTRACE", Some("1")), None);
        assert_eq!(
            risky_variable(HUMAN_VARIABLE, Some("1")),
            Some(Variable::Human)
        );
    }

    #[test]
    fn human_commands_are_found_in_program_text() {
        let found = |t: &str| names_human_command(t);
        assert_eq!(
            found("import pty; pty.spawn([\"git\",\"orchestrate\",\"approve\"])").as_deref(),
            Some("git orchestrate approve")
        );
        assert_eq!(
            found("spawn git-orchestrate resume; interact").as_deref(),
            Some("git orchestrate resume")
        );
        assert_eq!(found("git orchestrate get-task"), None);
        assert_eq!(found("orchestrated approvers"), None);
        assert_eq!(
            found("import pty; pty.spawn([\"git\",\"orchestrate\",\"claim\",\"steal\",\"pr-1\"])")
                .as_deref(),
            Some("git orchestrate claim")
        );
        assert_eq!(found("git orchestrate claim list"), None);
    }
}
