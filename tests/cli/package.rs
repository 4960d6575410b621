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
