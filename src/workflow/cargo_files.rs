//! What cargo reads around a test besides the test (docs/integrity.md, "Per-test evidence"):
//! the manifests' target declarations (which binaries `cargo test` builds and runs, from
//! which files, whether with libtest's harness), its configuration (`.cargo/config.toml`: a
//! `runner` every test binary is run through) and the toolchain file (which cargo runs).
//! Pure: the engine gives the files' bytes.

/// The manifest cargo reads a package's targets from.
pub const MANIFEST: &str = "Cargo.toml";

/// The names of the files cargo reads around a test, by file name: the manifests, its
/// configuration (`config.toml` and `config`, in a `.cargo` directory only:
/// [`is_cargo_file`]) and the toolchain file.
pub const CARGO_FILES: &[&str] = &[
    MANIFEST,
    "config.toml",
    "config",
    "rust-toolchain.toml",
    "rust-toolchain",
];

fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// Whether `path` is one of the files cargo reads around a test ([`CARGO_FILES`]): a
/// manifest or toolchain file in any directory, a `config` or `config.toml` in a `.cargo`
/// directory (cargo reads those of the directory it runs in and every one above it).
pub fn is_cargo_file(path: &str) -> bool {
    match file_name(path) {
        "config.toml" | "config" => {
            let dir = path.rsplit_once('/').map_or("", |(dir, _)| dir);
            file_name(dir) == ".cargo"
        }
        name => CARGO_FILES.contains(&name),
    }
}

/// Whether `path` is a manifest (`Cargo.toml`), which counts by what decides a package's
/// test binaries only ([`manifest_part`]).
pub fn is_manifest(path: &str) -> bool {
    file_name(path) == MANIFEST
}

/// The tables of a manifest that name what a package builds with, not what it builds: a
/// dependency a GREEN step adds is code the test runs against, as the code is.
const DEPENDENCY_TABLES: &[&str] = &[
    "dependencies",
    "dev-dependencies",
    "dev_dependencies",
    "build-dependencies",
    "build_dependencies",
    "features",
    "patch",
    "replace",
    "badges",
];

/// The keys of a manifest's `[package]` (and `[workspace.package]`) that describe the package
/// to people and registries: no test binary is built or run otherwise for them.
const METADATA_KEYS: &[&str] = &[
    "version",
    "authors",
    "description",
    "documentation",
    "readme",
    "homepage",
    "repository",
    "license",
    "license-file",
    "keywords",
    "categories",
    "publish",
    "metadata",
    "rust-version",
    "include",
    "exclude",
    "default-run",
];

/// What of a manifest decides which test binaries `cargo test` builds and runs: the parsed manifest without its dependency
/// tables ([`DEPENDENCY_TABLES`], those of `[target.'cfg(…)']` and `[workspace.dependencies]`
/// too) and its package's descriptive keys ([`METADATA_KEYS`]). What remains is every
/// target declaration (`[lib]`, `[[bin]]`, `[[test]]`, `[[bench]]`, `[[example]]` with their
/// `name`, `path`, `harness`, `test`, `required-features`), the `autotests`, `autobins`, …
/// switches, `build`, the workspace's members and the profiles: a `[[test]]` a GREEN step
/// declares `harness = false`, whose binary prints libtest's lines as it likes, is a change.
/// A manifest that is not UTF-8 or not TOML is its bytes, compared whole.
#[derive(Clone, Debug, PartialEq)]
pub enum ManifestPart {
    /// No manifest.
    Nothing,
    /// The bytes of a manifest that could not be parsed.
    Bytes(Vec<u8>),
    /// What of a parsed manifest decides the test binaries.
    Toml(toml::Value),
}

/// See [`ManifestPart`].
pub fn manifest_part(content: Option<&[u8]>) -> ManifestPart {
    let Some(bytes) = content else {
        return ManifestPart::Nothing;
    };
    let Some(mut table) = std::str::from_utf8(bytes)
        .ok()
        .and_then(|text| text.parse::<toml::Table>().ok())
    else {
        return ManifestPart::Bytes(bytes.to_vec());
    };
    strip_dependencies(&mut table);
    for package in ["package", "project"] {
        strip_keys(table.get_mut(package), METADATA_KEYS);
    }
    if let Some(toml::Value::Table(targets)) = table.get_mut("target") {
        for (_, target) in targets.iter_mut() {
            if let toml::Value::Table(target) = target {
                strip_dependencies(target);
            }
        }
        targets.retain(|_, t| !is_empty_table(t));
    }
    if let Some(toml::Value::Table(workspace)) = table.get_mut("workspace") {
        strip_keys(workspace.get_mut("package"), METADATA_KEYS);
        workspace.remove("dependencies");
        workspace.remove("metadata");
    }
    table.retain(|_, t| !is_empty_table(t));
    ManifestPart::Toml(toml::Value::Table(table))
}

fn strip_dependencies(table: &mut toml::Table) {
    for key in DEPENDENCY_TABLES {
        table.remove(*key);
    }
}

fn strip_keys(value: Option<&mut toml::Value>, keys: &[&str]) {
    if let Some(toml::Value::Table(table)) = value {
        for key in keys {
            table.remove(*key);
        }
    }
}

fn is_empty_table(value: &toml::Value) -> bool {
    matches!(value, toml::Value::Table(t) if t.is_empty())
}

/// Whether cargo builds and runs the same test binaries by the manifest `pinned` (as the RED
/// step left it, or the base has it; `None`: none there) and `now` ([`manifest_part`]). A
/// manifest where the pinned tree has none is a package the test's own is not: its targets
/// are its own, and whether the pinned test's binary is built, and from what, is its
/// package's manifest's to say (a GREEN step may add a crate).
pub fn same_for_cargo(pinned: Option<&[u8]>, now: Option<&[u8]>) -> bool {
    pinned.is_none() || manifest_part(pinned) == manifest_part(now)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    const PACKAGE: &str = "[package]\nname = \"calc\"\nversion = \"0.1.0\"\nedition = \"2021\"\n";

    fn same(a: &str, b: &str) -> bool {
        same_for_cargo(Some(a.as_bytes()), Some(b.as_bytes()))
    }

    #[test]
    fn cargo_files_are_named_by_file_name_and_config_by_its_directory() {
        for path in [
            "Cargo.toml",
            "crates/calc/Cargo.toml",
            ".cargo/config.toml",
            ".cargo/config",
            "crates/calc/.cargo/config.toml",
            "rust-toolchain",
            "rust-toolchain.toml",
        ] {
            assert!(is_cargo_file(path), "{path}");
        }
        for path in [
            "config.toml",
            "config",
            "app/config.toml",
            "cargo/config",
            "tests/calc.rs",
            "Cargo.lock",
        ] {
            assert!(!is_cargo_file(path), "{path}");
        }
    }

    /// A GREEN step may add a dependency (a `[dependencies]` entry, a target-specific one, a
    /// workspace's), a feature or describe its package: cargo builds and runs the same test
    /// binaries.
    #[test]
    fn dependencies_and_descriptions_are_not_what_cargo_tests() {
        let with = |extra: &str| format!("{PACKAGE}{extra}");
        for extra in [
            "\n[dependencies]\nhelper = { path = \"helper\" }\n",
            "\n[dev-dependencies]\nhelper = { path = \"helper\" }\n",
            "\n[build-dependencies]\ncc = \"1\"\n",
            "\n[target.'cfg(unix)'.dependencies]\nlibc = \"0.2\"\n",
            "\n[features]\nfast = []\n",
            "\n[workspace]\n\n[workspace.dependencies]\nserde = \"1\"\n",
            "\n[patch.crates-io]\nserde = { path = \"serde\" }\n",
        ] {
            let manifest = with(extra);
            let base = if extra.contains("[workspace]") {
                with("\n[workspace]\n")
            } else {
                PACKAGE.to_string()
            };
            assert!(same(&base, &manifest), "{extra}");
        }
        assert!(same(
            PACKAGE,
            &PACKAGE.replace("0.1.0", "0.2.0").replace(
                "edition",
                "description = \"multiplies\"\nlicense = \"MIT\"\nedition"
            )
        ));
    }

    /// What decides which binaries `cargo test` runs, and from which files, is a change:
    /// a `harness = false` target (whose binary prints what it likes), a test target moved
    /// to another file, automatic test targets turned off, a workspace's members, a build
    /// script, a target-specific table that is no dependency table.
    #[test]
    fn target_declarations_are_what_cargo_tests() {
        for extra in [
            "autotests = false\n",
            "build = \"build.rs\"\n",
            "\n[[test]]\nname = \"calc\"\nharness = false\n",
            "\n[[test]]\nname = \"calc\"\npath = \"tests/fake.rs\"\n",
            "\n[[test]]\nname = \"aaa\"\npath = \"tests/aaa.rs\"\nharness = false\n",
            "\n[[bin]]\nname = \"fake\"\npath = \"src/fake.rs\"\n",
            "\n[lib]\nharness = false\n",
            "\n[[bench]]\nname = \"b\"\nharness = false\n",
            "\n[[example]]\nname = \"e\"\ntest = true\n",
            "\n[workspace]\nmembers = [\"fake\"]\n",
            "\n[profile.test]\nopt-level = 3\n",
        ] {
            assert!(!same(PACKAGE, &format!("{PACKAGE}{extra}")), "{extra}");
        }
        // Taken away too.
        let declared = format!("{PACKAGE}\n[[test]]\nname = \"calc\"\nharness = false\n");
        assert!(!same(&declared, PACKAGE));
        // A manifest gone is none: what the pinned tree's says is not there.
        assert!(!same_for_cargo(Some(PACKAGE.as_bytes()), None));
    }

    /// A manifest the pinned tree has none of is a new package; one that is not TOML is
    /// compared whole.
    #[test]
    fn a_new_manifest_is_its_own_package_and_one_not_toml_is_compared_whole() {
        assert!(same_for_cargo(None, Some(PACKAGE.as_bytes())));
        assert!(same_for_cargo(None, None));
        assert!(!same("[package\n", "[package\n\n"));
        assert!(same("[package\n", "[package\n"));
        assert_eq!(manifest_part(None), ManifestPart::Nothing);
        assert_eq!(
            manifest_part(Some(&[0xff, 0xfe])),
            ManifestPart::Bytes(vec![0xff, 0xfe])
        );
    }
}
