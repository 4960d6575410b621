//! What a test runner reads around a test besides the test (docs/integrity.md, "Per-test
//! evidence"): pytest's and jest's configuration files and the part of each they read, the
//! plugin modules a module names in `pytest_plugins` and those a configuration's `addopts`
//! loads with `-p` (what jest's configuration names is src/workflow/jest_files.rs', what
//! cargo reads src/workflow/cargo_files.rs'). Pure:
//! the engine gives the files' bytes.

use crate::workflow::cargo_files;

/// The files pytest looks for its configuration in, in each directory from the one it starts
/// in up to the root (its rootdir/inifile search), in the order it prefers them.
pub const CONFIG_FILES: &[&str] = &[
    "pytest.ini",
    ".pytest.ini",
    "pyproject.toml",
    "tox.ini",
    "setup.cfg",
];

/// The files jest looks for its configuration in (`package.json` by its `jest` key).
pub const JEST_CONFIG_FILES: &[&str] = &[
    "jest.config.js",
    "jest.config.ts",
    "jest.config.mjs",
    "jest.config.cjs",
    "jest.config.json",
    "package.json",
];

fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// Whether `path` is one of pytest's configuration files ([`CONFIG_FILES`]), in any
/// directory.
pub fn is_config(path: &str) -> bool {
    CONFIG_FILES.contains(&file_name(path))
}

/// Whether `path` is one of jest's configuration files ([`JEST_CONFIG_FILES`]).
pub fn is_jest_config(path: &str) -> bool {
    JEST_CONFIG_FILES.contains(&file_name(path))
}

/// Whether `path` is a file other tools read too (`pyproject.toml`, `tox.ini`, `setup.cfg`,
/// `package.json`, cargo's `Cargo.toml`), of which the runner reads one section only
/// ([`pytest_part`]).
pub fn is_shared_config(path: &str) -> bool {
    matches!(
        file_name(path),
        "pyproject.toml" | "tox.ini" | "setup.cfg" | "package.json" | "Cargo.toml"
    )
}

/// What pytest reads of the configuration file `path` whose bytes are `content` (`None`:
/// there is no such file). A shared file's is its pytest section only: `[tool.pytest]` of a
/// `pyproject.toml` (`ini_options` in it, and the tables pytest 9 reads there too), the
/// `[pytest]` and `[tool:pytest]` sections of a `tox.ini` or `setup.cfg`, as pytest's INI
/// reader (iniconfig) splits them; a file without one is as good as none. A `pytest.ini` is
/// read whole. A file that cannot be read so (not UTF-8, not TOML) is its bytes: compared
/// whole.
#[derive(Clone, Debug, PartialEq)]
pub enum RunnerPart {
    /// No file, or a shared one with no pytest section.
    Nothing,
    /// The bytes of a file read whole, or of one that could not be parsed.
    Bytes(Vec<u8>),
    /// A `pyproject.toml`'s `tool.pytest` table.
    Toml(toml::Value),
    /// An INI file's pytest sections: each one's name and its lines, as written.
    Ini(Vec<(String, Vec<String>)>),
    /// A `package.json`'s `jest` and `mocha` values, those it has.
    Json(serde_json::Value),
}

/// The keys of a `package.json` a test runner reads its options from: jest's and mocha's.
const RUNNER_KEYS: &[&str] = &["jest", "mocha"];

/// See [`RunnerPart`].
pub fn pytest_part(path: &str, content: Option<&[u8]>) -> RunnerPart {
    let Some(bytes) = content else {
        return RunnerPart::Nothing;
    };
    if !is_shared_config(path) {
        return RunnerPart::Bytes(bytes.to_vec());
    }
    if cargo_files::is_manifest(path) {
        return match cargo_files::manifest_part(content) {
            cargo_files::ManifestPart::Nothing => RunnerPart::Nothing,
            cargo_files::ManifestPart::Bytes(bytes) => RunnerPart::Bytes(bytes),
            cargo_files::ManifestPart::Toml(value) => RunnerPart::Toml(value),
        };
    }
    let Ok(text) = std::str::from_utf8(bytes) else {
        return RunnerPart::Bytes(bytes.to_vec());
    };
    if file_name(path) == "package.json" {
        return match serde_json::from_str::<serde_json::Value>(text) {
            Ok(json) => {
                let runners: serde_json::Map<String, serde_json::Value> = RUNNER_KEYS
                    .iter()
                    .filter_map(|key| json.get(*key).map(|v| (key.to_string(), v.clone())))
                    .collect();
                if runners.is_empty() {
                    RunnerPart::Nothing
                } else {
                    RunnerPart::Json(serde_json::Value::Object(runners))
                }
            }
            Err(_) => RunnerPart::Bytes(bytes.to_vec()),
        };
    }
    if path.ends_with("pyproject.toml") {
        return match text.parse::<toml::Table>() {
            Ok(table) => match table.get("tool").and_then(|t| t.get("pytest")) {
                Some(pytest) => RunnerPart::Toml(pytest.clone()),
                None => RunnerPart::Nothing,
            },
            Err(_) => RunnerPart::Bytes(bytes.to_vec()),
        };
    }
    // iniconfig drops a byte-order mark before it reads the first line.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let sections = ini_sections(text, &["pytest", "tool:pytest"]);
    if !sections.is_empty() {
        RunnerPart::Ini(sections)
    } else if text.contains("pytest]") {
        // No section found here, yet a header pytest reads may be in it (a way of writing
        // one this reader does not take as iniconfig does): the file counts whole.
        RunnerPart::Bytes(bytes.to_vec())
    } else {
        RunnerPart::Nothing
    }
}

/// Whether pytest reads the same of the configuration file `path` in both versions
/// (`None`: absent), `a` as the RED step left it (or the base has it), `b` as it is now: a
/// `pyproject.toml` whose `[project]` alone changed is the same to it. So is, to cargo, a
/// `Cargo.toml` whose dependencies alone changed, or one where `a` has none
/// ([`cargo_files::same_for_cargo`]).
pub fn same_for_pytest(path: &str, a: Option<&[u8]>, b: Option<&[u8]>) -> bool {
    if cargo_files::is_manifest(path) {
        return cargo_files::same_for_cargo(a, b);
    }
    pytest_part(path, a) == pytest_part(path, b)
}

/// The sections named one of `names` in the INI text `text`, as iniconfig (pytest's INI
/// reader) splits it: a line is a line by Python's `str.splitlines`; one whose first
/// non-blank character is `#` or `;` is a comment; a section begins at a line that starts
/// with `[` and, cut at its first `#` or `;` and stripped at its end, ends with `]`, its
/// name what is between. Each section's lines are kept as written (stripped at their end),
/// comments and blank lines too: a change anywhere in a pytest section is one. Lines before
/// the first section belong to none.
pub fn ini_sections(text: &str, names: &[&str]) -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    let mut current: Option<usize> = None;
    for line in python_lines(text) {
        let stripped = line.trim_start_matches(python_space);
        let comment = stripped.starts_with('#') || stripped.starts_with(';');
        if !comment && line.starts_with('[') {
            let mut head = line;
            for c in ['#', ';'] {
                head = head.split(c).next().unwrap_or_default();
            }
            let head = head.trim_end_matches(python_space);
            if head.len() >= 2 && head.ends_with(']') {
                let name = &head[1..head.len() - 1];
                current = names.contains(&name).then(|| {
                    out.push((name.to_string(), Vec::new()));
                    out.len() - 1
                });
                continue;
            }
        }
        if let Some(i) = current {
            out[i]
                .1
                .push(line.trim_end_matches(python_space).to_string());
        }
    }
    out
}

/// `text` cut into lines where Python's `str.splitlines` cuts it (`\r\n` as one break).
fn python_lines(text: &str) -> Vec<&str> {
    let mut lines = Vec::new();
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if is_line_break(c) {
            lines.push(&text[start..i]);
            let mut end = i + c.len_utf8();
            if c == '\r'
                && let Some(&(j, '\n')) = chars.peek()
            {
                chars.next();
                end = j + 1;
            }
            start = end;
        }
    }
    if start < text.len() {
        lines.push(&text[start..]);
    }
    lines
}

/// The characters Python's `str.splitlines` breaks a line at.
fn is_line_break(c: char) -> bool {
    matches!(
        c,
        '\n' | '\r'
            | '\u{0b}'
            | '\u{0c}'
            | '\u{1c}'
            | '\u{1d}'
            | '\u{1e}'
            | '\u{85}'
            | '\u{2028}'
            | '\u{2029}'
    )
}

/// Python's `str.isspace`: Unicode's white space, and the separators `\x1c`–`\x1f`.
fn python_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// The files a pytest command line names itself: the configuration file of `-c FILE` /
/// `--config-file FILE` (pytest reads it instead of searching for one), and the module
/// files a `-p NAME` plugin may be (loaded before the tests, [`plugin_files`] from the
/// root), each `=`-joined or attached form too. Words are split at white space, quotes
/// dropped; paths outside the repository are left out (nothing here can pin them).
pub fn named_by_command(command: &str) -> Vec<String> {
    // `PYTEST_ADDOPTS="-p plug"` (an assignment, an `export`) puts its words before the
    // arguments as `addopts` does: they are read as the command's.
    let words: Vec<String> = command
        .split_whitespace()
        .map(|w| w.replace(['\'', '"'], ""))
        .map(|w| match w.split_once("PYTEST_ADDOPTS=") {
            Some((_, rest)) => rest.to_string(),
            None => w,
        })
        .collect();
    let (configs, plugins) = config_and_plugin_args(&words);
    let mut out: Vec<String> = Vec::new();
    for config in configs {
        let path = config.trim_start_matches("./");
        let inside = !path.is_empty()
            && !path.starts_with('/')
            && path.split('/').all(|p| !matches!(p, "" | "." | ".."));
        if inside {
            out.push(path.to_string());
        }
    }
    for plugin in plugins {
        out.extend(plugin_files(&plugin, "conftest.py"));
    }
    out.sort();
    out.dedup();
    out
}

/// The files the pytest command lines of the shell script `text` name
/// ([`named_by_command`]): a wrapper the RED command runs (`sh run_tests.sh`) that runs
/// `pytest -p myplugin tests` loads the plugin as the command itself would. A line is one
/// that names pytest (`pytest`, `py.test`, `python -m pytest`) or sets `PYTEST_ADDOPTS`
/// (read as the command's words, [`named_by_command`]), its continuation lines
/// (a backslash at the end) joined; what a line builds otherwise (a variable, a function)
/// is not read.
pub fn named_by_script(text: &str) -> Vec<String> {
    let joined = text.replace("\\\r\n", " ").replace("\\\n", " ");
    let mut out: Vec<String> = joined
        .lines()
        .filter(|line| {
            line.contains("pytest") || line.contains("py.test") || line.contains("PYTEST_ADDOPTS")
        })
        .flat_map(named_by_command)
        .collect();
    out.sort();
    out.dedup();
    out
}

/// The values of `-c`/`--config-file` and the plugins `-p` loads among pytest's arguments
/// `words`, as pytest's early reading of `-p` takes them (`-p NAME`, `-pNAME`; an `=` after
/// `-p` kept off, which reads a name pytest cannot import but costs nothing to pin): a
/// `no:NAME` blocks a plugin and loads none.
fn config_and_plugin_args(words: &[String]) -> (Vec<String>, Vec<String>) {
    let mut configs = Vec::new();
    let mut plugins = Vec::new();
    let mut i = 0;
    while i < words.len() {
        let word = words[i].as_str();
        i += 1;
        let (slot, value) = if let Some(v) = word.strip_prefix("--config-file=") {
            (&mut configs, Some(v.to_string()))
        } else if word == "--config-file" || word == "-c" {
            (&mut configs, None)
        } else if word == "-p" {
            (&mut plugins, None)
        } else if let Some(v) = word.strip_prefix("-c") {
            (&mut configs, Some(v.trim_start_matches('=').to_string()))
        } else if let Some(v) = word.strip_prefix("-p") {
            (&mut plugins, Some(v.trim_start_matches('=').to_string()))
        } else {
            continue;
        };
        let value = match value {
            Some(v) => v,
            None => match words.get(i) {
                Some(v) => {
                    i += 1;
                    v.clone()
                }
                None => continue,
            },
        };
        slot.push(value.trim().to_string());
    }
    plugins.retain(|p| !p.starts_with("no:"));
    (configs, plugins)
}

/// Whether `path` may be a pytest configuration file: one of [`CONFIG_FILES`], or a file a
/// `-c` names, which pytest reads by its suffix (`.ini`, `.cfg`, `.toml`).
pub fn is_config_like(path: &str) -> bool {
    is_config(path) || [".ini", ".cfg", ".toml"].iter().any(|e| path.ends_with(e))
}

/// The plugin modules the `addopts` of the pytest configuration file `path` (its bytes
/// `content`) loads with `-p`, as the RED command's `-p` does ([`named_by_command`]):
/// pytest puts `addopts` before the command's arguments and loads their `-p` plugins before
/// it runs a test. The value is read where pytest reads it: a TOML file's
/// `[tool.pytest.ini_options]` (and pytest 9's `[tool.pytest]`), a string split as shell
/// words or a list; an INI file's `[pytest]` and `[tool:pytest]` sections, a key's value
/// with its continuation lines, as iniconfig joins them, split as shell words (`shlex`).
pub fn addopts_plugins(path: &str, content: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(content);
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let mut words: Vec<String> = Vec::new();
    if path.ends_with(".toml") {
        let Ok(table) = text.parse::<toml::Table>() else {
            return Vec::new();
        };
        let pytest = table.get("tool").and_then(|t| t.get("pytest"));
        let values = [
            pytest
                .and_then(|p| p.get("ini_options"))
                .and_then(|o| o.get("addopts")),
            pytest.and_then(|p| p.get("addopts")),
        ];
        for value in values.into_iter().flatten() {
            match value {
                toml::Value::String(s) => words.extend(shell_words(s)),
                toml::Value::Array(items) => {
                    words.extend(items.iter().filter_map(|i| i.as_str().map(str::to_string)));
                }
                _ => {}
            }
        }
    } else {
        for (_, lines) in ini_sections(text, &["pytest", "tool:pytest"]) {
            for value in ini_values(&lines, "addopts") {
                words.extend(shell_words(&value));
            }
        }
    }
    config_and_plugin_args(&words).1
}

/// The values of `key` in a section's `lines`, as iniconfig reads them: a line that begins
/// with no white space is `name = value` (or `name: value`), one that does continues the
/// value before it (joined by a line break), a comment line or a blank one is none.
fn ini_values(lines: &[String], key: &str) -> Vec<String> {
    let mut values: Vec<(String, Vec<String>)> = Vec::new();
    for line in lines {
        let stripped = line.trim_matches(python_space);
        if stripped.is_empty() || stripped.starts_with(['#', ';']) {
            continue;
        }
        if line.starts_with(python_space) {
            if let Some((_, value)) = values.last_mut() {
                value.push(stripped.to_string());
            }
            continue;
        }
        let split = match line.split_once('=') {
            Some((name, value)) if !name.contains(':') => Some((name, value)),
            _ => line.split_once(':'),
        };
        if let Some((name, value)) = split {
            let value = value.trim_matches(python_space);
            let first = if value.is_empty() {
                Vec::new()
            } else {
                vec![value.to_string()]
            };
            values.push((name.trim_matches(python_space).to_string(), first));
        }
    }
    values
        .into_iter()
        .filter(|(name, _)| name == key)
        .map(|(_, lines)| lines.join("\n"))
        .collect()
}

/// `text` split into words as Python's `shlex.split` splits it (POSIX mode): at white space,
/// `'…'` taken as written, `"…"` with a backslash escaping a backslash or `"` only, a
/// backslash outside quotes escaping the next character. An unclosed quote ends the last
/// word (pytest then stops with an error, and loads no plugin of it).
fn shell_words(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => {
                if let Some(w) = word.take() {
                    words.push(w);
                }
            }
            '\'' => {
                let w = word.get_or_insert_with(String::new);
                for c in chars.by_ref() {
                    if c == '\'' {
                        break;
                    }
                    w.push(c);
                }
            }
            '"' => {
                let w = word.get_or_insert_with(String::new);
                while let Some(c) = chars.next() {
                    match c {
                        '"' => break,
                        '\\' => match chars.next() {
                            Some(e @ ('\\' | '"')) => w.push(e),
                            Some(e) => {
                                w.push('\\');
                                w.push(e);
                            }
                            None => w.push('\\'),
                        },
                        c => w.push(c),
                    }
                }
            }
            '\\' => {
                let w = word.get_or_insert_with(String::new);
                if let Some(e) = chars.next() {
                    w.push(e);
                }
            }
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    if let Some(w) = word {
        words.push(w);
    }
    words
}

/// The modules a Python module (`source`) names in a top-level `pytest_plugins = "a.b"` or
/// `= ["a", "b"]` (a tuple too), which pytest imports as plugins before it runs the tests
/// the module's directory holds; empty when it sets none. Any other value (a name, a sum, a
/// call, `+=`), which only running the module tells, is `Err` with the line: refused rather
/// than guessed.
pub fn plugins(source: &str) -> Result<Vec<String>, String> {
    let mut names = Vec::new();
    let lines: Vec<&str> = source.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        i += 1;
        let Some(rest) = line.strip_prefix("pytest_plugins") else {
            continue;
        };
        let rest = rest.trim_start();
        // `pytest_plugins_x = …` is another name; `pytest_plugins == …` compares.
        let value = match rest.strip_prefix('=') {
            Some(v) if !v.starts_with('=') => v,
            _ if rest.starts_with(|c: char| c.is_alphanumeric() || c == '_') || rest.is_empty() => {
                continue;
            }
            _ => {
                return Err(format!(
                    "`{}`, which is no plain assignment of a literal",
                    line.trim()
                ));
            }
        };
        // The value, with the lines its brackets span.
        let mut text = value.to_string();
        while open_brackets(&text) && i < lines.len() {
            text.push('\n');
            text.push_str(lines[i]);
            i += 1;
        }
        match literal_names(&text) {
            Some(found) => names.extend(found),
            None => {
                return Err(format!(
                    "`pytest_plugins ={}`, which is not a string or a list of strings written \
                     out",
                    text.lines().next().unwrap_or_default()
                ));
            }
        }
    }
    Ok(names)
}

/// Whether `text` opens more `[`/`(` than it closes (outside strings).
fn open_brackets(text: &str) -> bool {
    let mut depth = 0i32;
    let mut quote: Option<char> = None;
    for c in text.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None => match c {
                '"' | '\'' => quote = Some(c),
                '[' | '(' => depth += 1,
                ']' | ')' => depth -= 1,
                '#' => break,
                _ => {}
            },
        }
    }
    depth > 0
}

/// The strings of a literal `"a"`, `'a'`, `["a", 'b']` or `("a",)`, comments and blank space
/// aside; `None` for anything else (an escape, a prefix, a concatenation, a name).
fn literal_names(text: &str) -> Option<Vec<String>> {
    let mut tokens = Vec::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => {}
            '#' => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        break;
                    }
                }
            }
            '"' | '\'' => {
                let mut s = String::new();
                loop {
                    match chars.next()? {
                        '\\' | '\n' => return None,
                        q if q == c => break,
                        other => s.push(other),
                    }
                }
                tokens.push(Token::Str(s));
            }
            '[' | ']' | '(' | ')' | ',' => tokens.push(Token::Punct(c)),
            _ => return None,
        }
    }
    let names = match tokens.as_slice() {
        [Token::Str(s)] => vec![s.clone()],
        [Token::Punct(open), inner @ .., Token::Punct(close)]
            if matches!((open, close), ('[', ']') | ('(', ')')) =>
        {
            let mut names = Vec::new();
            let mut want_str = true;
            for t in inner {
                match (t, want_str) {
                    (Token::Str(s), true) => {
                        names.push(s.clone());
                        want_str = false;
                    }
                    (Token::Punct(','), false) => want_str = true,
                    _ => return None,
                }
            }
            // `("a")` is a string, not a tuple: the same name.
            names
        }
        _ => return None,
    };
    Some(names)
}

#[derive(Debug)]
enum Token {
    Str(String),
    Punct(char),
}

/// The files of the repository a plugin module `name` (`a.b`) named in `declaring` (a
/// module's path) may be: `a/b.py` or `a/b/__init__.py` under each directory from the
/// repository's root down to `declaring`'s, where pytest's import path finds it (the root
/// or the first directory up with no `__init__.py`, which pytest puts on `sys.path`). A name
/// that is no dotted Python name has none.
pub fn plugin_files(name: &str, declaring: &str) -> Vec<String> {
    let parts: Vec<&str> = name.split('.').collect();
    let valid = parts.iter().all(|p| {
        !p.is_empty()
            && p.chars().all(|c| c.is_alphanumeric() || c == '_')
            && !p.starts_with(|c: char| c.is_ascii_digit())
    });
    if !valid {
        return Vec::new();
    }
    let module = parts.join("/");
    let dirs: Vec<&str> = declaring.split('/').collect();
    let mut out = Vec::new();
    for depth in 0..dirs.len() {
        let dir = dirs[..depth].join("/");
        let prefix = if dir.is_empty() {
            String::new()
        } else {
            format!("{dir}/")
        };
        out.push(format!("{prefix}{module}.py"));
        out.push(format!("{prefix}{module}/__init__.py"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn part(path: &str, text: &str) -> RunnerPart {
        pytest_part(path, Some(text.as_bytes()))
    }

    /// iniconfig drops a byte-order mark; a header this reader does not take as a pytest
    /// section leaves the file counting whole.
    #[test]
    fn a_pytest_section_behind_a_byte_order_mark_or_written_oddly_counts() {
        for path in ["tox.ini", "setup.cfg"] {
            let header = if path == "tox.ini" {
                "[pytest]"
            } else {
                "[tool:pytest]"
            };
            let plain = format!("{header}\naddopts = -p evil\n");
            let marked = format!("\u{feff}{plain}");
            assert_eq!(
                part(path, &marked),
                part(path, &plain),
                "{path}: the mark is dropped"
            );
            assert_ne!(part(path, &marked), RunnerPart::Nothing, "{path}");
            // A header this reader does not take as a pytest section: whole.
            let odd = format!("{header}]\naddopts = -p evil\n");
            assert_ne!(part(path, &odd), RunnerPart::Nothing, "{path}: {odd:?}");
        }
        assert_eq!(
            part("tox.ini", "[tox]\nenvlist = py3\n"),
            RunnerPart::Nothing
        );
    }

    #[test]
    fn the_files_a_pytest_command_names_are_its_config_and_plugins() {
        assert_eq!(
            named_by_command(
                "python -m pytest -c ci/ci-pytest.ini --rootdir . -p evil -q tests/test_calc.py"
            ),
            ["ci/ci-pytest.ini", "evil.py", "evil/__init__.py"]
        );
        assert_eq!(
            named_by_command("pytest --config-file=./a.ini -pplug"),
            ["a.ini", "plug.py", "plug/__init__.py"]
        );
        assert_eq!(
            named_by_command("pytest -c'ci.ini' --config-file \"b.ini\""),
            ["b.ini", "ci.ini"]
        );
        assert_eq!(
            named_by_command("pytest -p no:cacheprovider -c /etc/p.ini -c ../x.ini"),
            Vec::<String>::new()
        );
        assert_eq!(
            named_by_command("sh tests/test_mul.sh"),
            Vec::<String>::new()
        );
    }

    /// A wrapper script's pytest lines name files as the command's would; its other lines
    /// (a `grep -c`) name none.
    #[test]
    fn the_files_a_wrapper_scripts_pytest_lines_name_are_pinned() {
        assert_eq!(
            named_by_script(
                "#!/bin/sh\nset -e\ngrep -c x notes.txt\npython -m pytest -p myplugin \\\n  -c ci/cfg.ini tests/test_calc.py\n"
            ),
            ["ci/cfg.ini", "myplugin.py", "myplugin/__init__.py"]
        );
        assert_eq!(
            named_by_script("exec pytest -pplug tests\r\n"),
            ["plug.py", "plug/__init__.py"]
        );
        assert_eq!(
            named_by_script("grep -c x notes.txt\npytest tests\n"),
            Vec::<String>::new()
        );
        // `PYTEST_ADDOPTS` puts its words before pytest's arguments.
        assert_eq!(
            named_by_script(
                "export PYTEST_ADDOPTS=\"$PYTEST_ADDOPTS -p myplugin\"\npython -m unittest\n"
            ),
            ["myplugin.py", "myplugin/__init__.py"]
        );
        assert_eq!(
            named_by_command("PYTEST_ADDOPTS='-c ci.ini' python -m pytest tests"),
            ["ci.ini"]
        );
    }

    /// A shared file counts by its pytest section alone: `[project]` changed or a file
    /// without one added is the same to pytest; `addopts` changed in its section is not.
    #[test]
    fn a_shared_file_counts_by_its_pytest_section() {
        let base = "[project]\nname = \"calc\"\ndependencies = []\n\n[tool.pytest.ini_options]\naddopts = \"-q\"\n";
        let deps = base.replace("[]", "[\"requests\"]");
        assert!(same_for_pytest(
            "pyproject.toml",
            Some(base.as_bytes()),
            Some(deps.as_bytes())
        ));
        let evil = base.replace("\"-q\"", "\"-q -p evil\"");
        assert!(!same_for_pytest(
            "pyproject.toml",
            Some(base.as_bytes()),
            Some(evil.as_bytes())
        ));
        // Dotted keys at the top are the same table.
        assert_eq!(
            part(
                "pyproject.toml",
                "tool.pytest.ini_options.addopts = \"-p evil\"\n"
            ),
            part(
                "sub/pyproject.toml",
                "[tool.pytest.ini_options]\naddopts = \"-p evil\"\n"
            )
        );
        assert_eq!(
            part("pyproject.toml", "[project]\nname = \"x\"\n"),
            RunnerPart::Nothing
        );
        assert!(same_for_pytest(
            "pyproject.toml",
            None,
            Some(b"[project]\nname = \"x\"\n")
        ));
        // Not TOML: its bytes.
        assert_eq!(
            part("pyproject.toml", "[tool.pytest\n"),
            RunnerPart::Bytes(b"[tool.pytest\n".to_vec())
        );
        // pytest.ini is read whole.
        assert!(!same_for_pytest(
            "pytest.ini",
            Some(b"[pytest]\n"),
            Some(b"[pytest]\n\n")
        ));
        assert!(!same_for_pytest("tests/.pytest.ini", None, Some(b"")));
    }

    #[test]
    fn ini_sections_are_split_as_iniconfig_splits_them() {
        let text = "[metadata]\nname = calc\n[tool:pytest]  # pytest's\naddopts = -q\n  -p evil\n; note\n[flake8]\nmax = 1\n";
        assert_eq!(
            ini_sections(text, &["pytest", "tool:pytest"]),
            vec![(
                "tool:pytest".to_string(),
                vec![
                    "addopts = -q".to_string(),
                    "  -p evil".to_string(),
                    "; note".to_string()
                ]
            )]
        );
        // An indented `[pytest]` continues a value; a commented one is a comment.
        assert!(ini_sections("[x]\na = 1\n [pytest]\n#[pytest]\n", &["pytest"]).is_empty());
        // A form feed breaks the line in Python: the section begins after it.
        assert_eq!(
            ini_sections(
                "[metadata]\nname = x\x0c[pytest]\x1f\naddopts = -p evil\n",
                &["pytest"]
            ),
            vec![("pytest".to_string(), vec!["addopts = -p evil".to_string()])]
        );
        assert_eq!(
            ini_sections("[pytest]\r\na = 1\r\n", &["pytest"]),
            vec![("pytest".to_string(), vec!["a = 1".to_string()])]
        );
        assert_eq!(
            part("setup.cfg", "[metadata]\nx = 1\n"),
            RunnerPart::Nothing
        );
        assert!(!same_for_pytest(
            "tox.ini",
            Some(b"[tox]\n[pytest]\naddopts = -q\n"),
            Some(b"[tox]\n[pytest]\naddopts = -q -k 'not mul'\n")
        ));
    }

    /// A line of a section's body: a key, a continuation, a comment, a blank.
    fn body_line() -> impl Strategy<Value = String> {
        prop_oneof![
            "[a-z]{1,5} = [ -~]{0,10}",
            "[a-z]{1,5}: [ -~]{0,10}",
            "  [ -~]{0,10}",
            "[#;] [ -~]{0,10}",
            Just(String::new()),
        ]
    }

    proptest! {
        /// A file made of sections: what is read is the body of each pytest section, as
        /// written, whatever the other sections hold.
        #[test]
        fn the_pytest_sections_are_read_whole_and_alone(
            sections in proptest::collection::vec(
                (
                    prop_oneof![
                        Just("pytest"),
                        Just("tool:pytest"),
                        Just("metadata"),
                        Just("flake8"),
                    ],
                    proptest::collection::vec(body_line(), 0..5),
                ),
                0..6,
            ),
        ) {
            let mut text = String::new();
            let mut expected = Vec::new();
            for (name, body) in &sections {
                text.push_str(&format!("[{name}]\n"));
                for line in body {
                    text.push_str(line);
                    text.push('\n');
                }
                if matches!(*name, "pytest" | "tool:pytest") {
                    let lines = body.iter().map(|l| l.trim_end().to_string()).collect();
                    expected.push((name.to_string(), lines));
                }
            }
            prop_assert_eq!(ini_sections(&text, &["pytest", "tool:pytest"]), expected);
        }

        /// Whatever the agent writes, the reader reads it, and a section of another name
        /// appended changes nothing pytest reads.
        #[test]
        fn another_section_appended_changes_nothing(
            text in "[\\[\\]#; a-z=:\n\r\u{0c}\u{85}\u{1f}\u{2028}]{0,60}",
            extra in "[a-z]{1,5} = [ -~]{0,10}",
        ) {
            let names = ["pytest", "tool:pytest"];
            let sections = ini_sections(&text, &names);
            let other = format!("{text}\n[metadata]\n{extra}\n");
            prop_assert_eq!(ini_sections(&other, &names), sections);
            let _ = pytest_part("setup.cfg", Some(text.as_bytes()));
            let _ = plugins(&text);
        }
    }

    #[test]
    fn pytest_plugins_is_read_when_it_is_a_literal() {
        assert_eq!(
            plugins("pytest_plugins = \"a.b\"\n"),
            Ok(vec!["a.b".to_string()])
        );
        assert_eq!(
            plugins("import x\npytest_plugins = [\n    'a',  # one\n    \"b.c\",\n]\n"),
            Ok(vec!["a".to_string(), "b.c".to_string()])
        );
        assert_eq!(
            plugins("pytest_plugins = ('a',)\n"),
            Ok(vec!["a".to_string()])
        );
        assert_eq!(plugins("pytest_plugins=[]\n"), Ok(vec![]));
        assert_eq!(plugins("def f():\n    pytest_plugins = x\n"), Ok(vec![]));
        assert_eq!(plugins("pytest_plugins_extra = x\n"), Ok(vec![]));
        assert!(plugins("pytest_plugins = NAMES\n").is_err());
        assert!(plugins("pytest_plugins = ['a'] + more\n").is_err());
        assert!(plugins("pytest_plugins += ['a']\n").is_err());
        assert!(plugins("pytest_plugins: list = ['a']\n").is_err());
        assert!(plugins("pytest_plugins = f'{x}'\n").is_err());
        assert!(plugins("pytest_plugins = ['a' 'b']\n").is_err());
    }

    /// `-p` in a configuration's `addopts` loads a plugin as the command's does, in every
    /// file and spelling pytest reads it from; `no:` loads none, another key is no addopts.
    #[test]
    fn the_plugins_a_configurations_addopts_loads_are_read() {
        let plug = vec!["plug".to_string()];
        for (path, text) in [
            ("pytest.ini", "[pytest]\naddopts = -p plug\n"),
            ("pytest.ini", "[pytest]\naddopts = -q -pplug\n"),
            ("pytest.ini", "[pytest]\naddopts: -p=plug\n"),
            (
                "pytest.ini",
                "[pytest]\naddopts =\n    -q\n    # a comment\n    -p\n    plug\n",
            ),
            ("pytest.ini", "\u{feff}[pytest]\naddopts = -p \"plug\"\n"),
            ("tests/.pytest.ini", "[pytest]\naddopts = -p 'plug'\n"),
            (
                "tox.ini",
                "[tox]\naddopts = -p other\n[pytest]\naddopts = -p plug\n",
            ),
            (
                "setup.cfg",
                "[metadata]\nname = x\n[tool:pytest]\naddopts = -p plug -p no:cacheprovider\n",
            ),
            ("ci/ci.ini", "[pytest]\naddopts = -p plug\n"),
            (
                "pyproject.toml",
                "[tool.pytest.ini_options]\naddopts = \"-q -p plug\"\n",
            ),
            (
                "pyproject.toml",
                "[tool.pytest.ini_options]\naddopts = [\"-p\", \"plug\"]\n",
            ),
            ("pyproject.toml", "[tool.pytest]\naddopts = [\"-pplug\"]\n"),
        ] {
            assert_eq!(
                addopts_plugins(path, text.as_bytes()),
                plug,
                "{path}: {text:?}"
            );
        }
        for (path, text) in [
            ("pytest.ini", "[pytest]\naddopts = -p no:plug\n"),
            ("pytest.ini", "[pytest]\n# addopts = -p plug\n"),
            ("pytest.ini", "[pytest]\nmarkers = -p plug\n"),
            ("tox.ini", "[tox]\naddopts = -p plug\n"),
            ("pyproject.toml", "[tool.other]\naddopts = \"-p plug\"\n"),
        ] {
            assert!(
                addopts_plugins(path, text.as_bytes()).is_empty(),
                "{path}: {text:?}"
            );
        }
        assert_eq!(
            addopts_plugins("pytest.ini", b"[pytest]\naddopts = -p a.b -p\tc\n"),
            ["a.b", "c"]
        );
        assert_eq!(
            shell_words(r#"a 'b c' "d\"e" f\ g"#),
            ["a", "b c", "d\"e", "f g"]
        );
    }

    #[test]
    fn package_json_counts_by_its_jest_and_mocha_keys() {
        // package.json counts by its `jest` and `mocha` keys.
        assert!(same_for_pytest(
            "package.json",
            Some(br#"{"dependencies": {}, "jest": {"verbose": true}}"#),
            Some(br#"{"dependencies": {"left-pad": "1"}, "jest": {"verbose": true}}"#)
        ));
        assert!(!same_for_pytest(
            "package.json",
            Some(br#"{"name": "calc"}"#),
            Some(br#"{"name": "calc", "jest": {"setupFiles": ["./s.js"]}}"#)
        ));
        assert!(same_for_pytest(
            "package.json",
            Some(br#"{"mocha": {"spec": "test"}}"#),
            Some(br#"{"version": "2.0.0", "mocha": {"spec": "test"}}"#)
        ));
        assert!(!same_for_pytest(
            "package.json",
            Some(br#"{"name": "calc"}"#),
            Some(br#"{"name": "calc", "mocha": {"require": ["./stub.js"]}}"#)
        ));
        assert!(!same_for_pytest(
            "package.json",
            Some(br#"{"jest": {}, "mocha": {"spec": "test"}}"#),
            Some(br#"{"jest": {}, "mocha": {"spec": "other"}}"#)
        ));
        assert!(!same_for_pytest(
            "package.json",
            None,
            Some(br#"{"mocha": {}}"#)
        ));
    }

    #[test]
    fn a_plugin_is_looked_for_from_the_root_down_to_its_module() {
        assert_eq!(
            plugin_files("a.b", "tests/conftest.py"),
            vec![
                "a/b.py",
                "a/b/__init__.py",
                "tests/a/b.py",
                "tests/a/b/__init__.py"
            ]
        );
        assert_eq!(
            plugin_files("evil", "conftest.py"),
            vec!["evil.py", "evil/__init__.py"]
        );
        assert!(plugin_files("../x", "conftest.py").is_empty());
        assert!(plugin_files("a..b", "conftest.py").is_empty());
    }
}
