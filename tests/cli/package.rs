//! What a newcomer finds in the package: its licence, said the same way in Cargo.toml and
//! in the files beside it.

use std::path::Path;

#[test]
fn the_package_is_mit_or_apache_and_carries_both_licences() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let manifest: toml::Table = std::fs::read_to_string(root.join("Cargo.toml"))
        .unwrap()
        .parse()
        .unwrap();
    let package = manifest["package"].as_table().unwrap();
    assert_eq!(package["license"].as_str(), Some("MIT OR Apache-2.0"));
    for key in [
        "description",
        "keywords",
        "categories",
        "rust-version",
        "readme",
    ] {
        assert!(package.contains_key(key), "Cargo.toml names its {key}");
    }
    let mit = std::fs::read_to_string(root.join("LICENSE-MIT")).unwrap();
    assert!(
        mit.contains("Permission is hereby granted, free of charge"),
        "{mit}"
    );
    let apache = std::fs::read_to_string(root.join("LICENSE-APACHE")).unwrap();
    assert!(apache.contains("Apache License") && apache.contains("Version 2.0, January 2004"));
    let changelog = std::fs::read_to_string(root.join("CHANGELOG.md")).unwrap();
    assert!(changelog.starts_with("# Changelog\n"), "{changelog}");
    assert!(changelog.contains("## [Unreleased]"), "{changelog}");
    // Nothing a tool left behind at the top (a hook manager's sample configuration, say).
    let tracked = std::process::Command::new("git")
        .args(["ls-files", "--", "lefthook.yml", ".lefthook.yml"])
        .current_dir(root)
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&tracked.stdout), "");
}

/// The completion scripts come from the command line's own definition; bash's completes
/// `git orchestrate <TAB>` through git's own bash completion, with the subcommands' options
/// and values, `git -C DIR` before it too.
#[test]
fn completions_complete_git_orchestrate_under_gits_own_bash_completion() {
    let git_completion = [
        "/usr/share/bash-completion/completions/git",
        "/usr/share/git/completion/git-completion.bash",
        "/usr/share/git-core/contrib/completion/git-completion.bash",
        "/etc/bash_completion.d/git",
    ]
    .into_iter()
    .find(|p| Path::new(p).exists())
    .expect("git's bash completion (git-completion.bash) is installed with git");
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("git-orchestrate.bash");
    let out = std::process::Command::new(crate::support::BIN)
        .args(["completions", "bash"])
        .output()
        .unwrap();
    assert!(out.status.success());
    std::fs::write(&script, &out.stdout).unwrap();
    let complete = |line: &str| -> Vec<String> {
        let driver = format!(
            "source {git_completion}\nsource {}\n\
             COMP_LINE=\"$1\"; COMP_POINT=${{#COMP_LINE}}\n\
             read -ra COMP_WORDS <<< \"$COMP_LINE\"\n\
             [[ \"$COMP_LINE\" == *' ' ]] && COMP_WORDS+=('')\n\
             COMP_CWORD=$((${{#COMP_WORDS[@]}} - 1))\n\
             __git_wrap__git_main git \"${{COMP_WORDS[COMP_CWORD]}}\" \"${{COMP_WORDS[COMP_CWORD-1]}}\"\n\
             printf '%s\\n' \"${{COMPREPLY[@]}}\"\n",
            script.display()
        );
        let bin_dir = Path::new(crate::support::BIN).parent().unwrap();
        let path = format!(
            "{}:{}",
            bin_dir.display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let out = std::process::Command::new("bash")
            .args(["--norc", "--noprofile", "-c", &driver, "bash", line])
            .env("PATH", path)
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let mut found: Vec<String> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| l.trim_end().to_string())
            .filter(|l| !l.is_empty())
            .collect();
        found.sort();
        found
    };
    assert_eq!(
        complete("git orchestrate sub"),
        ["submit-work", "subtask-complete"]
    );
    assert_eq!(complete("git orchestrate subm"), ["submit-work"]);
    assert_eq!(complete("git orchestrate run --ag"), ["--agent"]);
    assert_eq!(
        complete("git orchestrate run --agent "),
        ["claude", "codex", "gemini"]
    );
    assert_eq!(
        complete("git -C . orchestrate completions "),
        [
            "--help",
            "--json",
            "--quiet",
            "--workflow",
            "-h",
            "-q",
            "bash",
            "fish",
            "zsh"
        ]
    );
    assert!(complete("git orchestrate ").contains(&"get-task".to_string()));

    for (shell, first) in [
        ("zsh", "#compdef git-orchestrate\n"),
        ("fish", "# Print an optspec"),
    ] {
        let out = std::process::Command::new(crate::support::BIN)
            .args(["completions", shell])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && text.starts_with(first),
            "{shell}: {text}"
        );
        assert!(
            text.contains("submit-work") && text.contains("--agent"),
            "{shell}"
        );
    }
}

/// After an install that is only the binary (as `cargo install` makes it), `git orchestrate
/// --help`, which git turns into `man git-orchestrate`, finds the page `man --install` put
/// beside it; without it, it does not.
#[test]
fn git_orchestrate_help_opens_the_installed_manual_page() {
    let prefix = tempfile::tempdir().unwrap();
    let bin = prefix.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::copy(crate::support::BIN, bin.join("git-orchestrate")).unwrap();
    let home = tempfile::tempdir().unwrap();
    let help = || {
        std::process::Command::new("git")
            .args(["orchestrate", "--help"])
            .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
            .env("HOME", home.path())
            .env("MANPAGER", "cat")
            .env("PAGER", "cat")
            .env_remove("MANPATH")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .current_dir(home.path())
            .output()
            .expect("git runs")
    };
    assert!(
        Path::new("/usr/bin/man").exists() || Path::new("/bin/man").exists(),
        "man (man-db) is needed to check that `git orchestrate --help` finds the page"
    );
    assert!(!help().status.success(), "no page yet");
    let out = std::process::Command::new(bin.join("git-orchestrate"))
        .args(["man", "--install"])
        .output()
        .unwrap();
    let page = prefix.path().join("share/man/man1/git-orchestrate.1");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!(
            "installed the manual page: {} (`man git-orchestrate`, `git orchestrate --help`)\n",
            page.display()
        )
    );
    let out = help();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("GIT-ORCHESTRATE(1)"), "{text}");
    assert!(text.contains("git orchestrate submit-work"), "{text}");
}

/// `init`, often the first command in a repository, installs the manual page as the demo
/// does and says so: `git orchestrate --help` works from the first use, not git's "No manual
/// entry".
#[test]
fn init_installs_the_manual_page_so_help_works_from_the_first_use() {
    let prefix = tempfile::tempdir().unwrap();
    let bin = prefix.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::copy(crate::support::BIN, bin.join("git-orchestrate")).unwrap();
    let repo = crate::support::TestRepo::empty();
    repo.write("README.md", "hello\n");
    repo.commit_all("first");
    let path = format!("{}:/usr/bin:/bin", bin.display());
    let help = || {
        repo.command("git", ["orchestrate", "--help"])
            .env("PATH", &path)
            .env("MANPAGER", "cat")
            .env("PAGER", "cat")
            .env_remove("MANPATH")
            .output()
            .unwrap()
    };
    assert!(!help().status.success(), "no page yet");
    let out = crate::support::Run::from(
        repo.command(bin.join("git-orchestrate").to_str().unwrap(), ["init"])
            .env("PATH", &path)
            .output()
            .unwrap(),
    );
    out.expect(0);
    let page = prefix.path().join("share/man/man1/git-orchestrate.1");
    assert!(
        out.stdout.contains(&format!(
            "installed the manual page: {} (`git orchestrate --help` opens it)\n",
            page.display()
        )),
        "{}",
        out.stdout
    );
    let out = help();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("GIT-ORCHESTRATE(1)"));
    // --json says where.
    let json = crate::support::Run::from(
        repo.command(
            bin.join("git-orchestrate").to_str().unwrap(),
            ["init", "--json"],
        )
        .env("PATH", &path)
        .output()
        .unwrap(),
    );
    assert_eq!(
        json.expect(0).json()["man_page"],
        page.display().to_string()
    );
}

/// The completion install lines of docs/install.md, run as written by `sh -e` in a home
/// where none of their directories exists yet, install all three scripts.
#[test]
fn the_documented_completion_install_lines_work_in_a_fresh_home() {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/install.md"))
            .unwrap();
    let section = &readme[readme.find("## Shell completions").unwrap()..];
    let start = section.find("```sh\n").unwrap() + "```sh\n".len();
    let block = &section[start..start + section[start..].find("```").unwrap()];
    let home = tempfile::tempdir().unwrap();
    let bin_dir = Path::new(crate::support::BIN).parent().unwrap();
    let out = std::process::Command::new("sh")
        .args(["-ec", block])
        .env("HOME", home.path())
        .env(
            "PATH",
            format!(
                "{}:{}",
                bin_dir.display(),
                std::env::var("PATH").unwrap_or_default()
            ),
        )
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .current_dir(home.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{block}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for (file, first) in [
        (
            ".local/share/bash-completion/completions/git-orchestrate",
            "",
        ),
        (".zfunc/_git-orchestrate", "#compdef git-orchestrate\n"),
        (
            ".config/fish/completions/git-orchestrate.fish",
            "# Print an optspec",
        ),
    ] {
        let text = std::fs::read_to_string(home.path().join(file)).unwrap();
        assert!(
            text.starts_with(first) && text.contains("submit-work"),
            "{file}"
        );
    }
}
