//! The option table against the installed git's `git <cmd> -h`, and the help parser.

use super::*;
use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const COVERED: &[&str] = &[
    "commit",
    "merge",
    "pull",
    "push",
    "fetch",
    "rebase",
    "checkout",
    "switch",
    "restore",
    "reset",
    "branch",
    "tag",
    "config",
    "update-ref",
    "symbolic-ref",
    "notes",
    "worktree",
    "stash",
    "cherry-pick",
    "revert",
    "am",
    "apply",
    "rm",
    "mv",
    "add",
    "log",
    "diff",
    "show",
    "format-patch",
    "gc",
    "reflog",
    "replace",
    "clone",
    "submodule",
    "clean",
    "grep",
    "archive",
    "fast-import",
    "bisect",
    "blame",
    "status",
    "remote",
    // Not asked for, but they print a diff and so take `--output`.
    "whatchanged",
    "diff-tree",
    "diff-files",
    "diff-index",
];

/// The sub-subcommands whose options `git <sub> -h` leaves out. Not asked: `stash create`
/// (it makes a stash commit whose message is `-h`) and `bisect start` (it starts
/// bisecting). `git config set -h` and friends are harmless in a git before 2.46, which
/// reads them as a key without a section.
const SUBCOMMANDS: &[(&str, &[&str])] = &[
    (
        "notes",
        &[
            "list", "add", "copy", "append", "edit", "show", "merge", "remove", "prune", "get-ref",
        ],
    ),
    (
        "worktree",
        &[
            "add", "list", "lock", "move", "prune", "remove", "repair", "unlock",
        ],
    ),
    (
        "stash",
        &[
            "list", "show", "drop", "pop", "apply", "branch", "push", "save", "clear", "store",
        ],
    ),
    ("reflog", &["show", "list", "expire", "delete", "exists"]),
    (
        "remote",
        &[
            "add",
            "rename",
            "remove",
            "set-head",
            "show",
            "prune",
            "update",
            "set-branches",
            "get-url",
            "set-url",
        ],
    ),
    (
        "config",
        &[
            "list",
            "get",
            "set",
            "unset",
            "rename-section",
            "remove-section",
            "edit",
        ],
    ),
];

/// git-submodule.sh answers `-h` with its usage alone and hands the work, options
/// included, to `git submodule--helper`, whose `-h` lists them.
const SUBMODULE_HELPER: &[&str] = &[
    "add",
    "status",
    "init",
    "deinit",
    "update",
    "set-branch",
    "set-url",
    "summary",
    "foreach",
    "sync",
    "absorbgitdirs",
];

/// Hook bypasses younger than a git the tests may meet: (command, option, first git).
const SINCE: &[(&str, &str, (u32, u32))] = &[("am", "--no-verify", (2, 40))];

fn git_under_test() -> String {
    std::env::var("GIT_ORCHESTRATE_TEST_GIT").unwrap_or_else(|_| "git".to_string())
}

/// A throwaway place to run git in: `outside` is in no repository, so `git diff -h` lists
/// the diff options (inside one it prints an older summary); `repo` is a fresh repository,
/// which sub-subcommands want even for `-h`. Removed on drop.
struct Scratch {
    root: PathBuf,
}

impl Scratch {
    fn new(test: &str) -> Scratch {
        let root = std::env::temp_dir().join(format!(
            "git-orchestrate-git-options-{test}-{}",
            std::process::id()
        ));
        let _ = fs::remove_dir_all(&root);
        fs::create_dir_all(root.join("outside")).expect("scratch directory");
        fs::write(root.join("gitconfig"), "").expect("scratch gitconfig");
        let scratch = Scratch { root };
        let init = scratch.git(&scratch.root, &["init", "-q", "repo"]);
        assert!(
            init.status.success(),
            "{} init: {}",
            git_under_test(),
            String::from_utf8_lossy(&init.stderr)
        );
        scratch
    }

    fn outside(&self) -> PathBuf {
        self.root.join("outside")
    }

    fn repo(&self) -> PathBuf {
        self.root.join("repo")
    }

    /// None of the caller's git environment reaches git: a hook running these tests sets
    /// GIT_DIR, which would point every command at the project's repository, and the
    /// user's configuration could alias or translate what git prints.
    fn git(&self, dir: &Path, args: &[&str]) -> Output {
        let mut command = Command::new(git_under_test());
        for (key, _) in std::env::vars_os() {
            if key.to_string_lossy().starts_with("GIT_") {
                command.env_remove(key);
            }
        }
        command
            .args(args)
            .current_dir(dir)
            .env("GIT_CEILING_DIRECTORIES", &self.root)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", self.root.join("gitconfig"))
            .env("HOME", &self.root)
            .env("XDG_CONFIG_HOME", &self.root)
            .env("GIT_EDITOR", "false")
            .env("GIT_PAGER", "cat")
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("LC_ALL", "C")
            .env_remove("LANGUAGE")
            .stdin(Stdio::null());
        command
            .output()
            .unwrap_or_else(|e| panic!("running {}: {e}", git_under_test()))
    }

    /// What git prints for `args`; `-h` exits 129, which says nothing here.
    fn help(&self, dir: &Path, args: &[&str]) -> String {
        let output = self.git(dir, args);
        format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    }

    /// Every option git lists for `git <sub>`, its sub-subcommands' included.
    fn listed(&self, sub: &str) -> Vec<(Option<char>, Option<String>, Takes)> {
        let mut texts = vec![self.help(&self.outside(), &[sub, "-h"])];
        for (_, names) in SUBCOMMANDS.iter().filter(|(name, _)| *name == sub) {
            for name in names.iter() {
                texts.push(self.help(&self.repo(), &[sub, name, "-h"]));
            }
        }
        if sub == "submodule" {
            for name in SUBMODULE_HELPER {
                texts.push(self.help(&self.repo(), &["submodule--helper", name, "-h"]));
            }
        }
        texts.iter().flat_map(|text| parse_help(text)).collect()
    }

    fn version(&self) -> (u32, u32) {
        let text = self.help(&self.outside(), &["--version"]);
        let mut numbers = text
            .split_whitespace()
            .nth(2)
            .unwrap_or_default()
            .split('.')
            .map(|n| n.parse::<u32>().unwrap_or_default());
        (
            numbers.next().unwrap_or_default(),
            numbers.next().unwrap_or_default(),
        )
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.root);
    }
}

fn spelled(short: Option<char>, long: &Option<String>) -> String {
    match (short, long) {
        (Some(c), Some(name)) => format!("-{c}/--{name}"),
        (Some(c), None) => format!("-{c}"),
        (None, Some(name)) => format!("--{name}"),
        (None, None) => String::new(),
    }
}

fn typed(letter: Option<char>, name: &str) -> String {
    match letter {
        Some(c) => format!("-{c}/{name}"),
        None => name.to_string(),
    }
}

fn owned(
    options: &[(Option<char>, Option<&str>, Takes)],
) -> Vec<(Option<char>, Option<String>, Takes)> {
    options
        .iter()
        .map(|(short, long, takes)| (*short, long.map(str::to_string), *takes))
        .collect()
}

#[test]
fn parse_help_reads_a_current_listing() {
    let text = "\
usage: git commit [-a | --interactive | --patch] [-s] [-v] [-u<mode>] [--amend]
                  [-F <file> | -m <msg>] [--reset-author] [--allow-empty]

    -q, --[no-]quiet      suppress summary after successful commit

Commit message options
    -F, --[no-]file <file>
                          read message from file
    --[no-]author <author>
                          override author for commit
    --[no-]fixup [(amend|reword):]commit
                          use autosquash formatted message to fixup or amend/reword specified commit
    -S, --[no-]gpg-sign[=<key-id>]
                          GPG sign commit

Commit contents options
    -n, --no-verify       bypass pre-commit and commit-msg hooks
    --verify              opposite of --no-verify
    -u, --[no-]untracked-files[=<mode>]
                          show untracked files, optional modes: all, normal, no. (Default: all)
";
    assert_eq!(
        parse_help(text),
        owned(&[
            (Some('q'), Some("quiet"), N),
            (Some('F'), Some("file"), V),
            (None, Some("author"), V),
            (None, Some("fixup"), V),
            (Some('S'), Some("gpg-sign"), O),
            (Some('n'), Some("no-verify"), N),
            (None, Some("verify"), N),
            (Some('u'), Some("untracked-files"), O),
        ])
    );
}

#[test]
fn parse_help_reads_an_older_listing() {
    // git 2.39: no `[no-]`, and one option with the raw short name 1.
    let text = "\
usage: git apply [<options>] [<patch>...]

    --exclude <path>      don't apply changes matching the given path
    -p <num>              remove <num> leading slashes from traditional diff paths
    --no-add              ignore additions made by the patch
    -C <n>                ensure at least <n> lines of context match
    --whitespace <action>
                          detect new or modified lines that have whitespace errors
    -v, --verbose         be verbose
    -\u{1}, --single-worktree
                          limits processing to reflogs from the current worktree only
";
    assert_eq!(
        parse_help(text),
        owned(&[
            (None, Some("exclude"), V),
            (Some('p'), None, V),
            (None, Some("no-add"), N),
            (Some('C'), None, V),
            (None, Some("whitespace"), V),
            (Some('v'), Some("verbose"), N),
            (None, Some("single-worktree"), N),
        ])
    );
}

#[test]
fn parse_help_tells_placeholders_from_descriptions() {
    let text = "\
Diff output format options
    -U, --unified[=<n>]   generate diffs with <n> lines context
    --stat[=<width>[,<name-width>[,<count>]]]
                          generate diffstat
    --ignore-space-at-eol ignore changes in whitespace at EOL
    --no-assume-unchanged clear assumed-unchanged bit
    --chmod (+|-)x        override the executable bit of the listed files
    -l <n>                prevent rename/copy detection if the number of rename/copy targets exceeds given limit
    --diff-filter [(A|C|D|M|R|T|U|X|B)...[*]]
                          select files by diff type
    --[no-]decorate[=...] decorate options
    -o, --output-directory <dir>
                          store resulting files in <dir>
    -NUM                  shortcut for -C NUM
    (
    )
    -e <pattern>          match <pattern>
    <rev-opts> are documented in git-rev-list(1)
";
    assert_eq!(
        parse_help(text),
        owned(&[
            (Some('U'), Some("unified"), O),
            (None, Some("stat"), O),
            (None, Some("ignore-space-at-eol"), N),
            (None, Some("no-assume-unchanged"), N),
            (None, Some("chmod"), V),
            (Some('l'), None, V),
            (None, Some("diff-filter"), V),
            (None, Some("decorate"), O),
            (Some('o'), Some("output-directory"), V),
            (Some('e'), None, V),
        ])
    );
}

#[test]
fn parse_help_of_a_usage_alone_is_empty() {
    let text = "\
usage: git worktree add [-f] [--detach] [--checkout] [--lock [--reason <string>]]
                        [--orphan] [(-b | -B) <new-branch>] <path> [<commit-ish>]
   or: git worktree list [-v | --porcelain [-z]]
";
    assert_eq!(parse_help(text), Vec::new());
}

#[test]
fn long_options_read_as_git_reads_them() {
    assert_eq!(long("commit", "--message"), Some(V));
    assert_eq!(long("commit", "--mess"), Some(V));
    assert_eq!(long("commit", "--me"), Some(V), "any unambiguous prefix");
    assert_eq!(long("commit", "--message=x"), Some(V));
    assert_eq!(long("commit", "--untracked-files"), Some(O));
    assert_eq!(long("commit", "--untracked-files=no"), Some(V));
    assert_eq!(long("commit", "--amend"), Some(N));
    assert_eq!(long("commit", "--amend=x"), None);
    assert_eq!(long("commit", "--no-message"), Some(N));
    assert_eq!(long("commit", "--no-verify"), Some(N));
    assert_eq!(long("commit", "--verify"), Some(N));
    assert_eq!(
        long("commit", "--no-ver"),
        None,
        "--no-verbose or --no-verify"
    );
    assert_eq!(long("commit", "--no-veri"), Some(N));
    assert_eq!(long("commit", "--unknown"), None);
    assert_eq!(long("commit", "-m"), None);
    assert_eq!(long("commit", "--"), None);
    assert_eq!(long("nonesuch", "--message"), None);
    assert_eq!(long("log", "--author"), Some(V));
    assert_eq!(long("log", "--format"), Some(O));
    assert_eq!(long("log", "--format=%H"), Some(V));
    assert_eq!(long("log", "--output"), Some(V));
    assert_eq!(long("diff", "--stat"), Some(O));
    assert_eq!(long("clone", "--no-checkout"), Some(N));
    assert_eq!(long("worktree", "--reason"), Some(V));
}

#[test]
fn long_names_expand() {
    assert_eq!(expand_long("commit", "no-veri"), Some("no-verify"));
    assert_eq!(expand_long("commit", "no-ver"), None);
    assert_eq!(expand_long("commit", "no-verify"), Some("no-verify"));
    assert_eq!(expand_long("pull", "no-verify"), Some("no-verify"));
    assert_eq!(
        expand_long("pull", "no-veri"),
        None,
        "or --no-verify-signatures"
    );
    assert_eq!(expand_long("pull", "no-verify-s"), None, "a negation");
    assert_eq!(expand_long("log", "output=x"), Some("output"));
    assert_eq!(expand_long("log", "no-output"), None);
    assert_eq!(
        expand_long("format-patch", "output-dir"),
        Some("output-directory")
    );
}

#[test]
fn short_options_read_as_git_reads_them() {
    assert_eq!(short("commit", 'm'), Some(V));
    assert_eq!(short("commit", 'u'), Some(O));
    assert_eq!(short("commit", 'a'), Some(N));
    assert_eq!(short("commit", 'Z'), None);
    assert_eq!(short("log", 'n'), Some(V));
    assert_eq!(short("log", '3'), Some(N));
    assert_eq!(
        short("format-patch", 'n'),
        Some(N),
        "--numbered, not --max-count"
    );
    assert_eq!(short("format-patch", 'o'), Some(V));
    assert_eq!(short("grep", 'e'), Some(V));
    assert_eq!(short("checkout", 'b'), Some(V));
}

#[test]
fn global_options_read_as_git_reads_them() {
    assert_eq!(global("-C"), Some(V));
    assert_eq!(global("-c"), Some(V));
    assert_eq!(global("-Cdir"), None);
    assert_eq!(global("--git-dir"), Some(V));
    assert_eq!(global("--git-dir=.git"), Some(V));
    assert_eq!(global("--git"), None, "git.c takes no abbreviation");
    assert_eq!(global("--exec-path"), Some(O));
    assert_eq!(global("--exec-path=/x"), Some(V));
    assert_eq!(global("--config-env"), Some(V));
    assert_eq!(global("--list-cmds=main"), Some(V));
    assert_eq!(global("--no-pager"), Some(N));
    assert_eq!(global("-P"), Some(N));
    assert_eq!(global("--bare=x"), None);
    assert_eq!(global("--"), None);
    assert_eq!(global("--=x"), None);
}

#[test]
fn every_covered_subcommand_has_a_table() {
    let bare: Vec<&&str> = COVERED
        .iter()
        .filter(|sub| sections(sub).is_empty())
        .collect();
    assert!(bare.is_empty(), "no table for {bare:?}");
}

#[test]
fn hook_bypasses_and_written_files_are_options_of_the_table() {
    let mut wrong = Vec::new();
    for sub in COVERED {
        for (letter, name) in hook_bypass(sub) {
            let bare = name.strip_prefix("--").unwrap_or_default();
            if long(sub, name) != Some(N)
                || expand_long(sub, bare) != Some(bare)
                || letter.is_some_and(|c| short(sub, c) != Some(N))
            {
                wrong.push(format!("git {sub} {}", typed(*letter, name)));
            }
        }
        for word in writes_file(sub) {
            let takes = match word.strip_prefix("--") {
                Some(_) => long(sub, word),
                None => word.chars().nth(1).and_then(|c| short(sub, c)),
            };
            if !matches!(takes, Some(V | O)) {
                wrong.push(format!("git {sub} {word}: {takes:?}"));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "not value options of the table:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn every_value_option_git_lists_is_in_the_table() {
    let scratch = Scratch::new("values");
    let mut seen = 0;
    let mut wrong = BTreeSet::new();
    for sub in COVERED {
        for (letter, name, takes) in scratch.listed(sub) {
            seen += 1;
            if takes == N {
                continue;
            }
            let by_long = name.as_ref().map(|name| long(sub, &format!("--{name}")));
            let by_short = letter.map(|c| short(sub, c));
            for table in [by_long, by_short].into_iter().flatten() {
                if table != Some(takes) {
                    wrong.insert(format!(
                        "git {sub} {}: git says {takes:?}, the table {table:?}",
                        spelled(letter, &name)
                    ));
                }
            }
        }
    }
    // A git that printed no listing would leave nothing to compare.
    assert!(
        seen > 500,
        "{} listed only {seen} options",
        git_under_test()
    );
    assert!(
        wrong.is_empty(),
        "{} ({}.{}) lists options the table reads otherwise:\n{}",
        git_under_test(),
        scratch.version().0,
        scratch.version().1,
        wrong.into_iter().collect::<Vec<_>>().join("\n")
    );
}

#[test]
fn hook_bypass_options_exist_in_git() {
    let scratch = Scratch::new("hooks");
    let installed = scratch.version();
    let mut absent = Vec::new();
    for sub in COVERED {
        let bypasses = hook_bypass(sub);
        if bypasses.is_empty() {
            continue;
        }
        let listed = scratch.listed(sub);
        for (letter, name) in bypasses {
            let since = SINCE
                .iter()
                .find(|(s, n, _)| s == sub && n == name)
                .map_or((0, 0), |(_, _, version)| *version);
            if installed < since {
                continue;
            }
            let bare = name.strip_prefix("--").unwrap_or_default();
            // Before `[no-]` was printed (git 2.39), `--verify` stood for both.
            let long_listed = listed.iter().any(|(_, long, _)| {
                long.as_deref() == Some(bare)
                    || bare
                        .strip_prefix("no-")
                        .is_some_and(|positive| long.as_deref() == Some(positive))
            });
            let short_listed = letter.is_none_or(|c| {
                listed
                    .iter()
                    .any(|(short, long, _)| *short == Some(c) && long.as_deref() == Some(bare))
            });
            if !long_listed || !short_listed {
                absent.push(format!("git {sub} {}", typed(*letter, name)));
            }
        }
    }
    assert!(
        absent.is_empty(),
        "{} ({}.{}) does not list:\n{}",
        git_under_test(),
        installed.0,
        installed.1,
        absent.join("\n")
    );
}
