//! Paths inside the repository as the readers of commands and configurations name them
//! (src/workflow/shell_reach.rs, jest_files.rs, mocha_files.rs, src/config/ci_named.rs):
//! relative to a directory of the repository, with `.` and `..` taken as a shell takes them.

/// `path` read from the directory `dir` of the repository (`""`: its root): empty and `.`
/// parts dropped, each `..` taking one part back. `None` where it leads above the root; the
/// root itself is `""`.
pub fn within(dir: &str, path: &str) -> Option<String> {
    let mut parts: Vec<&str> = Vec::new();
    for part in dir.split('/').chain(path.split('/')) {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            part => parts.push(part),
        }
    }
    Some(parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::within;

    #[test]
    fn a_path_is_read_from_its_directory_and_never_leaves_the_root() {
        for (dir, path, wanted) in [
            ("", "a/b", Some("a/b")),
            ("", "./a//b/", Some("a/b")),
            ("t", "x.sh", Some("t/x.sh")),
            ("t/u", "../x.sh", Some("t/x.sh")),
            ("t", "../x.sh", Some("x.sh")),
            ("t", "../..", None),
            ("", "..", None),
            ("", "a/../..", None),
            ("", ".", Some("")),
            ("t", "..", Some("")),
        ] {
            assert_eq!(within(dir, path).as_deref(), wanted, "{dir} {path}");
        }
    }
}
