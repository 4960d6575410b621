//! The files pytest loads around a pinned test besides its `conftest.py` files, read from
//! the trees and the disk for src/engine/proof/step.rs (GREEN) and src/engine/proof/red.rs
//! (the final check): its configuration files, of which a shared one counts by its pytest
//! section only, the plugin modules `pytest_plugins` names and those `addopts` loads with
//! `-p` (src/workflow/pytest_files.rs), what jest's configuration names
//! (src/workflow/jest_files.rs), and cargo's manifests and configuration
//! (src/workflow/cargo_files.rs).

use std::path::Path;

use crate::engine::{EngineError, Session};
use crate::store::EntryType;
use crate::workflow::red;
use crate::workflow::{cargo_files, command_files, jest_files, mocha_files, pytest_files};

/// A configuration file or module larger than this is not parsed: compared whole.
const READ_CAP: u64 = 1 << 20;

/// The names of the files `runners` read around a test: pytest's `conftest.py` and
/// configuration files (`pytest.ini`, `pyproject.toml`, …), jest's configuration files
/// (`jest.config.js`, `package.json`, …), cargo's (`Cargo.toml`, `.cargo/config.toml`, the
/// toolchain file: [`cargo_files::is_cargo_file`] tells a `config.toml` of cargo's apart).
pub(super) fn runner_names(runners: red::Runners) -> Vec<&'static str> {
    let mut names = Vec::new();
    if runners.pytest {
        names.push(red::CONFTEST);
        names.extend(pytest_files::CONFIG_FILES);
    }
    if runners.jest {
        names.extend(pytest_files::JEST_CONFIG_FILES);
    }
    if runners.cargo {
        names.extend(cargo_files::CARGO_FILES);
    }
    names
}

/// Whether `path`, a file of one of [`runner_names`], is one its runner reads: cargo's
/// `config` and `config.toml` are those of a `.cargo` directory only.
pub(super) fn named_as_read(path: &str) -> bool {
    !matches!(path.rsplit('/').next(), Some("config" | "config.toml"))
        || cargo_files::is_cargo_file(path)
}

/// Every file of [`runner_names`] anywhere in each of `trees` ([`named_as_read`]).
pub(super) fn runner_files(
    session: &Session,
    trees: &[&str],
    runners: red::Runners,
) -> Result<Vec<String>, EngineError> {
    let names = runner_names(runners);
    if names.is_empty() {
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    for tree in trees {
        out.extend(session.store.files_named_any(tree, &names)?);
    }
    out.retain(|p| named_as_read(p));
    out.sort();
    out.dedup();
    Ok(out)
}

/// The bytes of the file at `path` in `tree`: `None` where it has none (or a directory, a
/// link); `Err(())` inside when it is too large to read.
fn tree_file(session: &Session, tree: &str, path: &str) -> Result<Option<Vec<u8>>, EngineError> {
    match session.store.tree_entry(tree, path)? {
        Some(entry) if matches!(entry.kind, EntryType::File | EntryType::Executable) => Ok(session
            .store
            .blob_within(&entry.id.to_string(), READ_CAP)?
            .ok()),
        _ => Ok(None),
    }
}

/// Whether the shared configuration file `path` (`pyproject.toml`, `tox.ini`, `setup.cfg`)
/// in the directory `dir` is what pytest reads of it in `tree`
/// ([`pytest_files::same_for_pytest`]): a file that is no plain file on either side, or too
/// large to parse, is not.
pub(super) fn same_for_pytest(
    session: &Session,
    tree: &str,
    path: &str,
    dir: &Path,
) -> Result<bool, EngineError> {
    let in_tree = match session.store.tree_entry(tree, path)? {
        None => None,
        Some(entry) if matches!(entry.kind, EntryType::File | EntryType::Executable) => {
            match tree_file(session, tree, path)? {
                Some(bytes) => Some(bytes),
                None => return Ok(false),
            }
        }
        Some(_) => return Ok(false),
    };
    let full = dir.join(path);
    let on_disk = match std::fs::symlink_metadata(&full) {
        Err(_) => None,
        Ok(meta) if meta.is_file() && meta.len() <= READ_CAP => match std::fs::read(&full) {
            Ok(bytes) => Some(bytes),
            Err(_) => return Ok(false),
        },
        Ok(_) => return Ok(false),
    };
    Ok(pytest_files::same_for_pytest(
        path,
        in_tree.as_deref(),
        on_disk.as_deref(),
    ))
}

/// The files of the plugin modules named in `pytest_plugins` by the Python modules
/// `declaring` (conftest.py files, pinned test modules) as `tree` has them
/// ([`pytest_files::plugin_files`]), and by those plugins in turn; `Err` with why when one
/// sets it to something other than a literal.
pub(super) fn plugin_files(
    session: &Session,
    tree: &str,
    declaring: &[String],
) -> Result<Result<Vec<String>, String>, EngineError> {
    let mut out: Vec<String> = Vec::new();
    let mut queue: Vec<String> = declaring
        .iter()
        .filter(|p| p.ends_with(".py"))
        .cloned()
        .collect();
    let mut seen = std::collections::BTreeSet::new();
    while let Some(module) = queue.pop() {
        if !seen.insert(module.clone()) {
            continue;
        }
        let Some(bytes) = tree_file(session, tree, &module)? else {
            continue;
        };
        let source = String::from_utf8_lossy(&bytes);
        let names = match pytest_files::plugins(&source) {
            Ok(names) => names,
            Err(why) => return Ok(Err(format!("{module} sets {why}"))),
        };
        for name in names {
            for file in pytest_files::plugin_files(&name, &module) {
                if !out.contains(&file) {
                    out.push(file.clone());
                    queue.push(file);
                }
            }
        }
    }
    out.sort();
    Ok(Ok(out))
}

/// The files of the plugin modules `-p` loads in the `addopts` of the pytest configuration
/// files among `configs` (those pytest finds, and one a `-c` names), each read as `tree_of`
/// says it is put ([`pytest_files::addopts_plugins`]): a module looked for from the root
/// down to the configuration's directory ([`pytest_files::plugin_files`]).
pub(super) fn addopts_plugin_files<'a>(
    session: &Session,
    tree_of: impl Fn(&str) -> &'a str,
    configs: &[String],
) -> Result<Vec<String>, EngineError> {
    let mut out = Vec::new();
    for config in configs.iter().filter(|c| pytest_files::is_config_like(c)) {
        let Some(bytes) = tree_file(session, tree_of(config), config)? else {
            continue;
        };
        for name in pytest_files::addopts_plugins(config, &bytes) {
            out.extend(pytest_files::plugin_files(&name, config));
        }
    }
    out.sort();
    out.dedup();
    Ok(out)
}

/// The scripts of the repository `command` runs ([`command_files::repository_files`]) that
/// `tree` holds and,
/// where `pytest` (its run was one pytest reported), the files the pytest command lines of
/// each script name with `-c` and `-p` as `tree` has it
/// ([`pytest_files::named_by_script`]).
pub(super) fn script_files(
    session: &Session,
    tree: &str,
    command: &str,
    pytest: bool,
) -> Result<Vec<String>, EngineError> {
    let mut out = Vec::new();
    for script in command_files::repository_files(command) {
        // One the tree does not hold (an ignored `./node_modules/.bin/jest`) is no test code
        // of the repository's: put back as the tree has it, it would be taken out.
        let Some(bytes) = tree_file(session, tree, &script)? else {
            continue;
        };
        if pytest {
            out.extend(pytest_files::named_by_script(&String::from_utf8_lossy(
                &bytes,
            )));
        }
        out.push(script);
    }
    out.sort();
    out.dedup();
    Ok(out)
}

/// The files mocha loads around a test its run `command` reported, as `tree` has them
/// (src/workflow/mocha_files.rs): its configuration files in the root (present or not: one a
/// GREEN step adds is taken out), the modules the command's `--require`/`-r`/`--file` load,
/// the configuration its `--config` names, and the modules each configuration there (and
/// the root `package.json`'s `mocha` key) names with `require` and `file`.
pub(super) fn mocha_files(
    session: &Session,
    tree: &str,
    command: &str,
) -> Result<Vec<String>, EngineError> {
    let named = mocha_files::named_by_command(command);
    // The root `package.json` too, by its `mocha` key ([`pytest_files::pytest_part`]): mocha
    // reads its options there, a `require` among them.
    let mut out: Vec<String> = mocha_files::CONFIG_FILES
        .iter()
        .map(|c| c.to_string())
        .chain(named.iter().cloned())
        .chain(std::iter::once(red::PACKAGE_JSON.to_string()))
        .collect();
    let configs = mocha_files::CONFIG_FILES
        .iter()
        .map(|c| c.to_string())
        .chain(mocha_files::configs_named_by_command(command))
        .chain(std::iter::once(red::PACKAGE_JSON.to_string()));
    for config in configs {
        if let Some(bytes) = tree_file(session, tree, &config)? {
            out.extend(mocha_files::named_by_config(&config, &bytes));
        }
    }
    // A name as written that is a directory (`require('./setup')` loads its `index.js`) is
    // no file to put back: its `index` is among the names.
    let mut files = Vec::new();
    for path in out {
        let entry = session.store.tree_entry(tree, &path)?;
        if entry.is_none_or(|e| !matches!(e.kind, EntryType::Directory | EntryType::Submodule)) {
            files.push(path);
        }
    }
    files.sort();
    files.dedup();
    Ok(files)
}

/// Whether `path` is a file (or an executable one) in `tree`.
fn is_file(session: &Session, tree: &str, path: &str) -> Result<bool, EngineError> {
    Ok(session
        .store
        .tree_entry(tree, path)?
        .is_some_and(|e| matches!(e.kind, EntryType::File | EntryType::Executable)))
}

/// The files jest's configuration files among `configs` name (src/workflow/jest_files.rs):
/// for each string that names a file of the tree the configuration is read from (or that
/// the file itself is put from, as `tree_of` says), every path jest may resolve it to, so
/// that one the GREEN step adds beside it (`tx` before `tx.js`) is taken out too; a preset
/// or project configuration named is read in turn, and so is the one each of `commands`
/// names with `--config`. `Err` with why when a JavaScript configuration names a module
/// otherwise than written out.
pub(super) fn jest_module_files<'a>(
    session: &Session,
    tree_of: impl Fn(&str) -> &'a str,
    configs: &[String],
    commands: &[&str],
) -> Result<Result<Vec<String>, String>, EngineError> {
    let dir_of = |path: &str| path.rsplit_once('/').map_or("", |(d, _)| d).to_string();
    let mut out = Vec::new();
    // Each configuration with the directories its paths resolve from, and whether it is
    // one by its kind (jest's own file, a preset, a project's), whose settings are held to
    // being written out, or a module a computed one requires.
    let mut queue: Vec<(String, Vec<String>, bool)> = configs
        .iter()
        .filter(|c| pytest_files::is_jest_config(c))
        .cloned()
        .chain(
            commands
                .iter()
                .flat_map(|c| jest_files::named_by_command(c)),
        )
        .map(|c| {
            let dir = dir_of(&c);
            (c, vec![dir], true)
        })
        .collect();
    let mut seen = std::collections::BTreeSet::new();
    while let Some((config, dirs, refuse)) = queue.pop() {
        if !seen.insert(config.clone()) {
            continue;
        }
        let tree = tree_of(&config);
        let Some(bytes) = tree_file(session, tree, &config)? else {
            continue;
        };
        let named = match jest_files::named(&config, &bytes, &dirs, refuse) {
            Ok(named) => named,
            Err(why) => return Ok(Err(why)),
        };
        for alts in &named.files {
            let mut names_one = false;
            for alt in alts {
                if is_file(session, tree, alt)? || is_file(session, tree_of(alt), alt)? {
                    names_one = true;
                    break;
                }
            }
            if names_one {
                out.extend(alts.iter().cloned());
            }
        }
        for (alts, refuse) in named
            .configs
            .iter()
            .map(|a| (a, true))
            .chain(named.required.iter().map(|a| (a, false)))
        {
            for alt in alts {
                if is_file(session, tree, alt)? || is_file(session, tree_of(alt), alt)? {
                    let mut with = dirs.clone();
                    with.push(dir_of(alt));
                    queue.push((alt.clone(), with, refuse));
                }
            }
        }
    }
    out.sort();
    out.dedup();
    Ok(Ok(out))
}
