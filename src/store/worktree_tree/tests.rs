use std::path::Path;

use proptest::prelude::*;

use super::*;
use crate::test_git::{git, put, repo_with_a_commit};

/// What git itself makes of the working tree: the product's own fallback, `git add --all`
/// (the paths `left_out` excluded) into a scratch copy of the index, then `write-tree`.
fn gits(dir: &Path, left_out: &[&str]) -> String {
    let git = crate::exec::git::Git::with_program(dir, "git")
        .leaving_out(left_out.iter().map(|p| p.to_string()));
    let scratch = git
        .index_with_all(&dir.join(".git/index"))
        .expect("git add --all");
    git.tree_of_index(&scratch).expect("git write-tree")
}

fn ours(dir: &Path, left_out: &[&str]) -> Option<String> {
    let store = Store::discover(dir, "main").expect("store");
    let left_out: Vec<String> = left_out.iter().map(|p| p.to_string()).collect();
    store
        .worktree_tree(&left_out)
        .expect("no error")
        .map(|id| id.to_string())
}

/// The same tree from both, and an answer from ours (the repository is a plain one).
fn same(dir: &Path, left_out: &[&str]) {
    assert_eq!(ours(dir, left_out), Some(gits(dir, left_out)));
}

#[test]
fn changed_added_removed_and_ignored_files_make_gits_tree() {
    let (temp, _) = repo_with_a_commit();
    let dir = temp.path();
    put(dir, "src/lib.rs", 0, "one");
    put(dir, "src/bin/run", 1, "two");
    put(dir, "link", 2, "src");
    put(dir, "gone", 0, "x");
    put(dir, ".gitignore", 0, "*.log\n/build/\n!keep.log\n");
    put(dir, "tracked.log", 0, "tracked, though ignored");
    git(dir, &["add", "--all"]);
    git(dir, &["add", "--force", "tracked.log"]);
    same(dir, &[]);
    // Each change after the index was written.
    put(dir, "src/lib.rs", 0, "one, changed");
    put(dir, "src/bin/run", 0, "two");
    std::fs::remove_file(dir.join("gone")).expect("rm");
    put(dir, "new/deep/file", 0, "new");
    put(dir, "x.log", 0, "ignored");
    put(dir, "keep.log", 0, "not ignored");
    put(dir, "build/out", 0, "ignored dir");
    put(dir, "tracked.log", 0, "changed");
    put(dir, "link", 2, "elsewhere");
    same(dir, &[]);
}

#[test]
fn a_file_that_became_a_directory_and_back_makes_gits_tree() {
    let (temp, _) = repo_with_a_commit();
    let dir = temp.path();
    put(dir, "a", 0, "file");
    put(dir, "b/c", 0, "in a dir");
    git(dir, &["add", "--all"]);
    put(dir, "a/inner", 0, "now a dir");
    std::fs::remove_dir_all(dir.join("b")).expect("rm");
    put(dir, "b", 0, "now a file");
    same(dir, &[]);
}

#[test]
fn paths_left_out_keep_the_index_s_version() {
    let (temp, _) = repo_with_a_commit();
    let dir = temp.path();
    put(dir, ".mcp.json", 0, "{}");
    put(dir, ".claude/settings.json", 0, "{}");
    put(dir, "code", 0, "x");
    git(dir, &["add", "--all"]);
    put(dir, ".mcp.json", 0, "{\"changed\": 1}");
    put(dir, ".claude/settings.json", 0, "changed");
    put(dir, ".claude/new.json", 0, "untracked");
    put(dir, ".codex/config.toml", 0, "untracked");
    put(dir, "code", 0, "y");
    same(
        dir,
        &[
            ".mcp.json",
            ".claude/settings.json",
            ".claude/new.json",
            ".codex",
        ],
    );
}

/// A path left out that `.gitignore` also names, there: git failed the whole `add` over it
/// ("The following paths are ignored by one of your .gitignore files") when the pathspec
/// named it literally, and every passing step with it.
#[test]
fn paths_left_out_that_are_ignored_too_are_left_out_by_both() {
    let (temp, _) = repo_with_a_commit();
    let dir = temp.path();
    put(dir, "code", 0, "x");
    put(dir, ".codex/config.toml", 0, "tracked");
    git(dir, &["add", "--all"]);
    put(
        dir,
        ".gitignore",
        0,
        ".mcp.json\n.codex/\n.claude/settings.json\n",
    );
    put(dir, ".mcp.json", 0, "{}");
    put(dir, ".claude/settings.json", 0, "{}");
    put(dir, ".codex/config.toml", 0, "changed");
    put(dir, ".codex/hooks.json", 0, "new");
    put(dir, "code", 0, "y");
    let left_out = [
        ".mcp.json",
        ".claude/settings.json",
        ".codex/config.toml",
        ".codex/hooks.json",
    ];
    same(dir, &left_out);
    // And git's own road, where the walk leaves the tree to it.
    put(dir, ".gitattributes", 0, "*.bin binary\n");
    assert_eq!(ours(dir, &left_out), None);
    let tree = gits(dir, &left_out);
    let listed = git(dir, &["ls-tree", "-r", "--name-only", &tree]);
    assert_eq!(
        listed,
        ".codex/config.toml\n.gitattributes\n.gitignore\ncode"
    );
    let kept = git(dir, &["rev-parse", &format!("{tree}:.codex/config.toml")]);
    let before = git(dir, &["rev-parse", ":.codex/config.toml"]);
    assert_eq!(kept, before, "the index's version, not the working tree's");
}

#[test]
fn a_file_rewritten_in_the_index_s_second_is_read_again() {
    // Racily clean: the index written in the same instant as the file's change; only its
    // content tells, and the size is the same.
    let (temp, _) = repo_with_a_commit();
    let dir = temp.path();
    put(dir, "f", 0, "aaaa");
    git(dir, &["add", "--all"]);
    put(dir, "f", 0, "bbbb");
    same(dir, &[]);
}

#[test]
fn an_ignored_directory_holding_tracked_files_keeps_them_and_adds_nothing_else() {
    let (temp, _) = repo_with_a_commit();
    let dir = temp.path();
    put(dir, "vendor/kept", 0, "x");
    git(dir, &["add", "--all"]);
    put(dir, ".gitignore", 0, "vendor/\n!vendor/new\n");
    put(dir, "vendor/kept", 0, "changed");
    put(dir, "vendor/new", 0, "ignored: its directory is");
    put(dir, "vendor/.gitignore", 0, "!*\n");
    same(dir, &[]);
}

#[test]
fn info_exclude_and_nested_gitignores_make_gits_tree() {
    let (temp, _) = repo_with_a_commit();
    let dir = temp.path();
    std::fs::create_dir_all(dir.join(".git/info")).expect("mkdir");
    std::fs::write(dir.join(".git/info/exclude"), "*.tmp\nsecret\n").expect("write");
    put(dir, "a.tmp", 0, "x");
    put(
        dir,
        "sub/.gitignore",
        0,
        "!*.tmp\nlocal\n/anchored\n**/deep\n",
    );
    put(dir, "sub/b.tmp", 0, "re-included below");
    put(dir, "sub/local", 0, "ignored here");
    put(dir, "local", 0, "not ignored at the top");
    put(dir, "sub/anchored", 0, "ignored");
    put(dir, "sub/x/anchored", 0, "not anchored here");
    put(dir, "sub/x/deep", 0, "ignored");
    put(dir, "secret", 0, "ignored");
    put(
        dir,
        "a dir with spaces/\u{e9}t\u{e9}\n",
        0,
        "odd names are names",
    );
    same(dir, &[]);
}

#[test]
fn a_repository_without_an_index_yet_makes_gits_tree() {
    let dir = tempfile::tempdir().expect("temp");
    git(dir.path(), &["init", "--quiet"]);
    put(dir.path(), "f", 0, "x");
    put(dir.path(), "d/g", 1, "y");
    same(dir.path(), &[]);
}

/// The cases read otherwise than this walk reads them are left to git.
#[test]
fn what_git_reads_otherwise_is_left_to_it() {
    let case = |setup: &dyn Fn(&Path), why: &str| {
        let (temp, _) = repo_with_a_commit();
        let dir = temp.path();
        put(dir, "f", 0, "x");
        git(dir, &["add", "--all"]);
        setup(dir);
        assert_eq!(ours(dir, &[]), None, "{why}");
    };
    case(
        &|d| put(d, ".gitattributes", 0, "* text=auto\n"),
        "attributes",
    );
    case(
        &|d| put(d, "sub/.gitattributes", 0, "*.c filter=x\n"),
        "attributes below",
    );
    case(
        &|d| git(d, &["config", "core.autocrlf", "true"]).truncate(0),
        "autocrlf",
    );
    case(
        &|d| git(d, &["config", "core.fileMode", "false"]).truncate(0),
        "fileMode",
    );
    case(
        &|d| git(d, &["config", "core.ignoreCase", "true"]).truncate(0),
        "ignoreCase",
    );
    case(
        &|d| git(d, &["config", "core.excludesFile", "/dev/null"]).truncate(0),
        "an excludes file",
    );
    case(
        &|d| {
            std::fs::create_dir_all(d.join(".git/info")).expect("mkdir");
            std::fs::write(d.join(".git/info/attributes"), "* -text\n").expect("write");
        },
        "info/attributes",
    );
    case(
        &|d| {
            git(&d.join("nested").tap_mkdir(), &["init", "--quiet"]);
        },
        "a nested repository",
    );
    case(&|d| put(d, ".gitmodules", 0, ""), "submodules");
    case(
        &|d| git(d, &["config", "attr.tree", "HEAD"]).truncate(0),
        "attributes from a tree",
    );
    case(
        &|d| git(d, &["config", "core.trustctime", "false"]).truncate(0),
        "ctime not trusted",
    );
    case(
        &|d| git(d, &["config", "core.checkStat", "minimal"]).truncate(0),
        "fewer stat fields",
    );
    case(
        &|d| {
            put(d, ".gitattributes", 0, "*.txt text\n");
            git(d, &["add", ".gitattributes"]);
            std::fs::remove_file(d.join(".gitattributes")).expect("rm");
        },
        "attributes the index holds, gone from the working tree",
    );
    case(
        &|d| {
            std::os::unix::fs::symlink("elsewhere", d.join(".gitignore")).expect("link");
        },
        "a linked .gitignore",
    );
    case(
        &|d| {
            let fifo = d.join("fifo");
            let made = std::process::Command::new("mkfifo")
                .arg(&fifo)
                .status()
                .expect("mkfifo");
            assert!(made.success());
        },
        "a FIFO",
    );
    case(&|d| put(d, ".GIT./x", 0, "y"), "a name like .git");
    case(&|d| put(d, "git~1", 0, "y"), "a short name");
    case(&|d| put(d, "a\\b", 0, "y"), "a backslash");
    case(
        &|d| git(d, &["update-index", "--assume-unchanged", "f"]).truncate(0),
        "assumed unchanged",
    );
}

trait TapMkdir {
    fn tap_mkdir(self) -> Self;
}

impl TapMkdir for std::path::PathBuf {
    fn tap_mkdir(self) -> Self {
        std::fs::create_dir_all(&self).expect("mkdir");
        self
    }
}

/// Names that sort around `/` and each other as git's trees and index order them.
const NAMES: &[&str] = &["a", "a-b", "a.c", "a0", "b", "c d", "x.log", "\u{e9}"];

/// Lines of `.gitignore` files: names, globs, anchors, directories only, negations.
const PATTERNS: &[&str] = &[
    "a", "/a", "a/", "!a", "*.log", "!x.log", "b*", "**/a0", "a/**", "*", "!*/", "!b", "c d",
    "a-b/", "/*.c", "#a", "\\!a", "a?", "[ab]", "a0/", "**/b/", " ",
];

type Op = (u8, Vec<usize>, u8, String);

fn ops() -> impl Strategy<Value = Vec<Op>> {
    proptest::collection::vec(
        (
            0u8..5,
            proptest::collection::vec(0..NAMES.len(), 1..4),
            0u8..3,
            "[a-c]{0,3}",
        ),
        1..16,
    )
}

fn ignore_file() -> impl Strategy<Value = Vec<usize>> {
    proptest::collection::vec(0..PATTERNS.len(), 0..4)
}

/// Applies `ops` under `dir`: 0–1 write a file, 2 remove a path, 3 write a `.gitignore`
/// in the path's directory, 4 touch a file with the same content.
fn apply(dir: &Path, ops: &[Op], ignores: &[Vec<usize>]) {
    for (n, (op, parts, kind, content)) in ops.iter().enumerate() {
        let path: Vec<&str> = parts.iter().map(|i| NAMES[*i]).collect();
        let path = path.join("/");
        match op {
            0 | 1 => put(dir, &path, *kind, content),
            2 => {
                let full = dir.join(&path);
                let _ = std::fs::remove_file(&full);
                let _ = std::fs::remove_dir_all(&full);
            }
            3 => {
                let lines = &ignores[n % ignores.len().max(1)];
                let text: Vec<&str> = lines.iter().map(|i| PATTERNS[*i]).collect();
                let parent = Path::new(&path).parent().unwrap_or(Path::new(""));
                let at = parent.join(".gitignore");
                put(dir, at.to_str().expect("utf-8"), 0, &text.join("\n"));
            }
            _ => {
                let full = dir.join(&path);
                if let Ok(bytes) = std::fs::read(&full) {
                    let _ = std::fs::write(&full, bytes);
                }
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Whatever was added, then changed, removed, ignored or left out: git's tree, and an
    /// answer (the repository is a plain one).
    #[test]
    fn the_tree_is_the_one_git_add_all_makes(
        before in ops(),
        after in ops(),
        ignores in proptest::collection::vec(ignore_file(), 1..4),
        exclude in ignore_file(),
        // The paths left out are ASCII (the agents' files): a name without an ASCII
        // character is left out literally, which git refuses where it is ignored.
        left_out in proptest::collection::vec(0..NAMES.len() - 1, 0..2),
    ) {
        let (temp, _) = repo_with_a_commit();
        let dir = temp.path();
        apply(dir, &before, &ignores);
        git(dir, &["add", "--all"]);
        std::fs::create_dir_all(dir.join(".git/info")).expect("mkdir");
        let text: Vec<&str> = exclude.iter().map(|i| PATTERNS[*i]).collect();
        std::fs::write(dir.join(".git/info/exclude"), text.join("\n")).expect("exclude");
        apply(dir, &after, &ignores);
        let left_out: Vec<&str> = left_out.iter().map(|i| NAMES[*i]).collect();
        prop_assert_eq!(ours(dir, &left_out), Some(gits(dir, &left_out)));
    }
}

/// A linked worktree: its own index, the repository's shared `info/exclude`.
#[test]
fn a_linked_worktree_makes_gits_tree_with_the_shared_excludes() {
    let (temp, _) = repo_with_a_commit();
    let dir = temp.path();
    put(dir, "f", 0, "x");
    git(dir, &["add", "--all"]);
    git(dir, &["commit", "--quiet", "-m", "f"]);
    std::fs::create_dir_all(dir.join(".git/info")).expect("mkdir");
    std::fs::write(dir.join(".git/info/exclude"), "*.tmp\n").expect("write");
    let linked = tempfile::tempdir().expect("temp");
    let wt = linked.path().join("wt");
    git(
        dir,
        &[
            "worktree",
            "add",
            "--quiet",
            "--detach",
            wt.to_str().expect("utf-8"),
        ],
    );
    put(&wt, "f", 0, "changed");
    put(&wt, "x.tmp", 0, "excluded");
    put(&wt, "g", 1, "new");
    let store = Store::discover(&wt, "main").expect("store");
    let ours = store
        .worktree_tree(&[])
        .expect("no error")
        .map(|id| id.to_string());
    let by_git = crate::exec::git::Git::with_program(&wt, "git");
    let index = store.index_path();
    let scratch = by_git.index_with_all(&index).expect("git add --all");
    let theirs = by_git.tree_of_index(&scratch).expect("write-tree");
    assert_eq!(ours, Some(theirs.clone()));
    let listed = git(&wt, &["ls-tree", "--name-only", &theirs]);
    assert_eq!(listed, "f\ng");
}

/// An entry git "smudged" (its size written as 0 because the file changed in the instant the
/// index was written) is read again, though every stat field matches an empty file.
#[test]
fn a_smudged_entry_is_read_again() {
    let (temp, _) = repo_with_a_commit();
    let dir = temp.path();
    put(dir, "f", 0, "");
    git(dir, &["add", "f"]);
    std::thread::sleep(std::time::Duration::from_millis(20));
    // The entry names another blob, its size 0, the rest of its stat data the file's.
    let other = git(dir, &["hash-object", "-w", "--stdin"]);
    let abc = {
        let out = std::process::Command::new("git")
            .args(["hash-object", "-w", "--stdin"])
            .current_dir(dir)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .and_then(|mut child| {
                use std::io::Write as _;
                child.stdin.take().expect("stdin").write_all(b"abc\n")?;
                child.wait_with_output()
            })
            .expect("hash-object");
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    assert_eq!(
        other, "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391",
        "the empty blob"
    );
    let path = dir.join(".git/index");
    let mut index = std::fs::read(&path).expect("the index");
    // One entry: 12 bytes of header, then 40 of stat data, then its id.
    assert_eq!(&index[12 + 62..12 + 64], b"f\0");
    let id = ObjectId::from_hex(abc.as_bytes()).expect("an id");
    index[12 + 40..12 + 60].copy_from_slice(id.as_bytes());
    std::fs::write(&path, &index).expect("write the index");
    let tree = ours(dir, &[]).expect("an answer");
    let listed = git(dir, &["ls-tree", &tree]);
    assert_eq!(
        listed,
        "100644 blob e69de29bb2d1d6434b8b29ae775ad8c2e48c5391\tf"
    );
}
