//! Real git for unit tests: a repository in a temporary directory, with a fixed identity and
//! no user or system config.

use std::path::Path;

/// Runs git in `dir`, asserting success; returns trimmed stdout.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.invalid")
        .output()
        .expect("run git");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// A new repository with one empty commit; returns it and that commit's id.
pub fn repo_with_a_commit() -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().expect("temp dir");
    git(dir.path(), &["init", "--quiet"]);
    git(
        dir.path(),
        &["commit", "--quiet", "--allow-empty", "-m", "one"],
    );
    let head = git(dir.path(), &["rev-parse", "HEAD"]);
    (dir, head)
}

/// A file of `kind` at `path` under `dir` (0: plain, 1: executable, 2: a link).
pub fn put(dir: &Path, path: &str, kind: u8, content: &str) {
    use std::os::unix::fs::PermissionsExt as _;
    let file = dir.join(path);
    // What stands in the way goes: a file where a directory on the path is, a directory
    // where the file is.
    let mut prefix = dir.to_path_buf();
    for part in Path::new(path)
        .parent()
        .into_iter()
        .flat_map(|p| p.components())
    {
        prefix.push(part);
        if std::fs::symlink_metadata(&prefix).is_ok_and(|m| !m.is_dir()) {
            std::fs::remove_file(&prefix).expect("remove a file in the way");
        }
    }
    if std::fs::symlink_metadata(&file).is_ok_and(|m| m.is_dir()) {
        std::fs::remove_dir_all(&file).expect("remove a directory in the way");
    }
    std::fs::create_dir_all(file.parent().expect("a parent")).expect("mkdir");
    let _ = std::fs::remove_file(&file);
    match kind {
        // A link to nothing cannot be made: its target is named at least.
        2 => std::os::unix::fs::symlink(format!("to-{content}"), &file).expect("link"),
        _ => {
            std::fs::write(&file, content).expect("write");
            let mode = if kind == 1 { 0o755 } else { 0o644 };
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(mode)).expect("chmod");
        }
    }
}

/// A FIFO at `path`, as an agent with a shell could put one where git keeps a file.
pub fn mkfifo(path: &Path) {
    rustix::fs::mknodat(
        rustix::fs::CWD,
        path,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
        0,
    )
    .expect("mkfifo");
}
