use std::path::Path;

use proptest::prelude::*;

use super::*;
use crate::test_git::{git, put, repo_with_a_commit};

/// The tree git itself writes for the repository's index (which it then updates).
fn git_tree(dir: &Path) -> String {
    git(dir, &["write-tree"])
}

fn ours(dir: &Path) -> Option<String> {
    let store = Store::discover(dir, "main").expect("store");
    store
        .tree_of_index(&dir.join(".git/index"))
        .expect("no error")
        .map(|id| id.to_string())
}

/// Names that sort around `/` and each other as git's trees and index order them.
const NAMES: &[&str] = &["a", "a-b", "a.c", "a0", "b", "c d", "\u{e9}", "z"];

fn files() -> impl Strategy<Value = Vec<(Vec<usize>, u8, String)>> {
    proptest::collection::vec(
        (
            proptest::collection::vec(0..NAMES.len(), 1..4),
            0u8..3,
            "[a-z]{0,6}",
        ),
        1..14,
    )
}

/// Writes `files` under `dir`, leaving out any whose path runs through another's file (the
/// working tree can hold only one of `a` and `a/b`); returns how many it wrote.
fn write_files(dir: &Path, files: &[(Vec<usize>, u8, String)]) -> usize {
    let mut written: Vec<Vec<usize>> = Vec::new();
    for (parts, kind, content) in files {
        let clash = written.iter().any(|w| {
            let n = w.len().min(parts.len());
            w[..n] == parts[..n]
        });
        if clash {
            continue;
        }
        let path: Vec<&str> = parts.iter().map(|i| NAMES[*i]).collect();
        put(dir, &path.join("/"), *kind, content);
        written.push(parts.clone());
    }
    written.len()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Whatever files, kinds and index version, and whether git's cache of trees is valid
    /// for part of the index or none of it: the tree is git's own, byte for byte.
    #[test]
    fn the_tree_is_the_one_git_writes(
        first in files(),
        second in files(),
        version in 2u8..5,
    ) {
        let (temp, _) = repo_with_a_commit();
        let dir = temp.path();
        git(dir, &["config", "index.version", &version.to_string()]);
        write_files(dir, &first);
        git(dir, &["add", "--all"]);
        let fresh = ours(dir);
        prop_assert_eq!(fresh, Some(git_tree(dir)));
        // Now git's cache holds every tree: some files change, the rest stay cached.
        write_files(dir, &second);
        git(dir, &["add", "--all"]);
        let cached = ours(dir);
        prop_assert_eq!(cached, Some(git_tree(dir)));
    }

    /// Any bytes, and any one byte of a real index changed: an answer or `None`, never a
    /// panic or an endless read.
    #[test]
    fn any_bytes_are_read_without_a_panic(
        bytes in proptest::collection::vec(any::<u8>(), 0..400),
        flip in any::<usize>(),
        to in any::<u8>(),
    ) {
        let _ = parse(&bytes, 20);
        let mut real = REAL_INDEX.with(|r| r.clone());
        let at = flip % real.len();
        real[at] = to;
        let _ = parse(&real, 20);
        let mut header = b"DIRC\0\0\0\x02".to_vec();
        header.extend_from_slice(&bytes);
        let _ = parse(&header, 20);
    }
}

thread_local! {
    /// The index of a small repository, in version 4 (paths written as changes to the one
    /// before), with its cache of trees valid.
    static REAL_INDEX: Vec<u8> = {
        let (temp, _) = repo_with_a_commit();
        let dir = temp.path();
        git(dir, &["config", "index.version", "4"]);
        put(dir, "a/b", 0, "x");
        put(dir, "a-b", 1, "y");
        put(dir, "c", 2, "a/b");
        git(dir, &["add", "--all"]);
        git(dir, &["write-tree"]);
        std::fs::read(dir.join(".git/index")).expect("the index")
    };
}

#[test]
fn a_submodule_s_commit_is_a_tree_entry_as_git_writes_it() {
    let (temp, head) = repo_with_a_commit();
    let dir = temp.path();
    put(dir, "sub-file", 0, "x");
    git(dir, &["add", "--all"]);
    git(
        dir,
        &[
            "update-index",
            "--add",
            "--cacheinfo",
            &format!("160000,{head},sub"),
        ],
    );
    assert_eq!(ours(dir), Some(git_tree(dir)));
}

#[test]
fn an_empty_index_is_the_empty_tree() {
    let (temp, _) = repo_with_a_commit();
    let dir = temp.path();
    put(dir, "f", 0, "x");
    git(dir, &["add", "f"]);
    git(dir, &["rm", "--cached", "--quiet", "f"]);
    assert_eq!(ours(dir), Some(git_tree(dir)));
    assert_eq!(git_tree(dir), "4b825dc642cb6eb9a060e54bf8d69288fbee4904");
}

/// The forms this reader leaves to git, each answered `None` (git then writes the tree, or
/// says why it cannot).
#[test]
fn forms_git_alone_reads_are_left_to_it() {
    // An entry only intended to be added: git leaves it out of the tree.
    let (temp, _) = repo_with_a_commit();
    let dir = temp.path();
    put(dir, "kept", 0, "x");
    put(dir, "intended", 0, "y");
    git(dir, &["add", "kept"]);
    git(dir, &["add", "--intent-to-add", "intended"]);
    assert_eq!(ours(dir), None, "intent to add");

    // A split index: its entries are in another file.
    let (temp, _) = repo_with_a_commit();
    let dir = temp.path();
    put(dir, "f", 0, "x");
    git(dir, &["add", "f"]);
    git(dir, &["update-index", "--split-index"]);
    assert_eq!(ours(dir), None, "split index");

    // A conflict: git refuses to write a tree of it.
    let (temp, _) = repo_with_a_commit();
    let dir = temp.path();
    let blob = {
        put(dir, "f", 0, "x");
        git(dir, &["hash-object", "-w", "f"])
    };
    let mut child = std::process::Command::new("git")
        .args(["update-index", "--index-info"])
        .current_dir(dir)
        .stdin(std::process::Stdio::piped())
        .spawn()
        .expect("git");
    {
        use std::io::Write as _;
        let stdin = child.stdin.as_mut().expect("stdin");
        writeln!(stdin, "100644 {blob} 1\tf").expect("write");
        writeln!(stdin, "100644 {blob} 2\tf").expect("write");
    }
    assert!(child.wait().expect("wait").success());
    assert_eq!(ours(dir), None, "a conflict");

    // A blob the objects lack: git says so.
    let (temp, _) = repo_with_a_commit();
    let dir = temp.path();
    git(
        dir,
        &[
            "update-index",
            "--add",
            "--cacheinfo",
            "100644,1234567890123456789012345678901234567890,gone",
        ],
    );
    assert_eq!(ours(dir), None, "a missing blob");
}

#[test]
fn a_link_or_a_fifo_in_the_index_s_place_is_not_read() {
    let (temp, _) = repo_with_a_commit();
    let dir = temp.path();
    put(dir, "f", 0, "x");
    git(dir, &["add", "f"]);
    let store = Store::discover(dir, "main").expect("store");
    let link = dir.join("link");
    std::os::unix::fs::symlink(dir.join(".git/index"), &link).expect("link");
    assert_eq!(store.tree_of_index(&link).expect("no error"), None);
    let fifo = dir.join("fifo");
    rustix::fs::mkfifoat(
        rustix::fs::CWD,
        &fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
    )
    .expect("fifo");
    assert_eq!(store.tree_of_index(&fifo).expect("no error"), None);
    assert_eq!(
        store
            .tree_of_index(&dir.join(".git/index"))
            .expect("no error")
            .map(|id| id.to_string()),
        Some(git_tree(dir))
    );
}

/// Where git's cache holds a tree valid, it is taken as it is: nothing is hashed or written
/// for the directories it covers, which is what keeps a large repository's call cheap.
#[test]
fn trees_git_holds_valid_are_taken_not_written_again() {
    let (temp, _) = repo_with_a_commit();
    let dir = temp.path();
    put(dir, "a/b/c", 0, "x");
    put(dir, "a/d", 1, "y");
    put(dir, "e", 0, "z");
    git(dir, &["add", "--all"]);
    let root = git_tree(dir);
    let parsed = parse(&std::fs::read(dir.join(".git/index")).expect("index"), 20).expect("read");
    let mut written = Vec::new();
    let mut write = |tree: gix::objs::Tree| -> Result<ObjectId, StoreError> {
        written.push(tree);
        Ok(ObjectId::null(gix::hash::Kind::Sha1))
    };
    let got = build(&parsed, &mut write, &|_| true).expect("built");
    assert_eq!(got.map(|id| id.to_string()), Some(root.clone()));
    assert!(written.is_empty(), "nothing written: {written:?}");

    // One file changed below `a/b`: `a/b`, `a` and the root are written again, nothing else.
    put(dir, "a/b/c", 0, "changed");
    git(dir, &["add", "--all"]);
    let parsed = parse(&std::fs::read(dir.join(".git/index")).expect("index"), 20).expect("read");
    let store = Store::discover(dir, "main").expect("store");
    let repo = store.repo().expect("repo");
    let mut names = Vec::new();
    let mut write = |tree: gix::objs::Tree| -> Result<ObjectId, StoreError> {
        names.push(
            tree.entries
                .iter()
                .map(|e| e.filename.to_string())
                .collect::<Vec<_>>()
                .join(","),
        );
        Ok(repo.write_object(&tree).expect("write").detach())
    };
    let got = build(&parsed, &mut write, &|_| true).expect("built");
    assert_eq!(names, ["c", "b,d", "a,e"]);
    assert_eq!(got.map(|id| id.to_string()), Some(git_tree(dir)));
}

/// A cached tree the objects lack (an index someone wrote by hand) is not taken: git
/// writes that directory's tree again, and so does this reader.
#[test]
fn a_cached_tree_the_objects_lack_is_written_again() {
    let (temp, _) = repo_with_a_commit();
    let dir = temp.path();
    put(dir, "a/b", 0, "x");
    git(dir, &["add", "--all"]);
    let root = git_tree(dir);
    let mut parsed =
        parse(&std::fs::read(dir.join(".git/index")).expect("index"), 20).expect("read");
    let gone = ObjectId::from_hex(b"1234567890123456789012345678901234567890").expect("hex");
    for (_, id) in parsed.cached.values_mut() {
        *id = gone;
    }
    let store = Store::discover(dir, "main").expect("store");
    let repo = store.repo().expect("repo");
    let mut write = |tree: gix::objs::Tree| -> Result<ObjectId, StoreError> {
        Ok(repo.write_object(&tree).expect("write").detach())
    };
    let got = build(&parsed, &mut write, &|id| repo.has_object(id)).expect("built");
    assert_eq!(got.map(|id| id.to_string()), Some(root));
}

/// The paths of an index [`parse`] leaves to git, where only they are asked: an
/// intent-to-add entry and a conflict's stages (one path each) are read; a split index,
/// whose entries are in another file, is not.
#[test]
fn the_paths_of_forms_left_to_git_are_read() {
    let paths = |dir: &Path| {
        let bytes = std::fs::read(dir.join(".git/index")).expect("index");
        parse_paths(&bytes, 20).map(|parsed| {
            parsed
                .entries
                .into_iter()
                .map(|e| String::from_utf8(e.path).expect("utf-8"))
                .collect::<Vec<_>>()
        })
    };
    let (temp, _) = repo_with_a_commit();
    let dir = temp.path();
    put(dir, "kept", 0, "x");
    put(dir, "intended", 0, "y");
    git(dir, &["add", "kept"]);
    git(dir, &["add", "--intent-to-add", "intended"]);
    assert_eq!(paths(dir), Some(vec!["intended".into(), "kept".into()]));

    let blob = git(dir, &["hash-object", "-w", "kept"]);
    let mut child = std::process::Command::new("git")
        .args(["update-index", "--index-info"])
        .current_dir(dir)
        .stdin(std::process::Stdio::piped())
        .spawn()
        .expect("git");
    {
        use std::io::Write as _;
        let stdin = child.stdin.as_mut().expect("stdin");
        for stage in 1..=3 {
            writeln!(stdin, "100644 {blob} {stage}\tb/f").expect("write");
        }
    }
    assert!(child.wait().expect("wait").success());
    assert_eq!(
        paths(dir),
        Some(vec!["b/f".into(), "intended".into(), "kept".into()])
    );

    git(dir, &["update-index", "--split-index"]);
    assert_eq!(paths(dir), None, "split index");
}
