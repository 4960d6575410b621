//! What mocha loads around a test besides it (docs/integrity.md, "Per-test evidence"): its
//! configuration files (`.mocharc.*`, a `package.json`'s `mocha` key) and the modules they or
//! its command line name (`--require`/`-r`, `--file`, a `--ui` or `--reporter` given as a
//! path, another `--config`). Pure; the reader only: nothing puts these back yet (mocha is
//! not among the runners tests/cli/managers.rs installs, so no test drives it through the
//! flow).

use serde_json::Value;

use super::jest_files;

/// The files mocha reads its configuration from, in its order (`package.json` by its
/// `mocha` key).
pub const CONFIG_FILES: &[&str] = &[
    ".mocharc.js",
    ".mocharc.cjs",
    ".mocharc.yaml",
    ".mocharc.yml",
    ".mocharc.jsonc",
    ".mocharc.json",
    "package.json",
];

/// The options whose values name modules mocha loads, or configuration it reads.
const KEYS: &[&str] = &["require", "file", "ui", "reporter", "config", "package"];

/// Whether `path` is one of mocha's configuration files ([`CONFIG_FILES`]).
pub fn is_config(path: &str) -> bool {
    CONFIG_FILES.contains(&path.rsplit('/').next().unwrap_or(path))
}

/// The files the mocha command line `command` names with `--require`/`-r`, `--file`, `--ui`/
/// `-u`, `--reporter`/`-R`, `--config` and `--package` (`--opt value` or `--opt=value`), each
/// as the paths it may be ([`paths`], from the directory the command runs in).
pub fn named_by_command(command: &str) -> Vec<Vec<String>> {
    let words: Vec<String> = command
        .split_whitespace()
        .map(|w| w.replace(['\'', '"'], ""))
        .collect();
    let option = |word: &str| {
        matches!(
            word,
            "--require"
                | "-r"
                | "--file"
                | "--ui"
                | "-u"
                | "--reporter"
                | "-R"
                | "--config"
                | "--package"
        )
    };
    let mut out = Vec::new();
    let mut i = 0;
    while i < words.len() {
        let word = words[i].as_str();
        i += 1;
        let value = match word.split_once('=') {
            Some((name, value)) if option(name) => value.to_string(),
            _ if option(word) => match words.get(i) {
                Some(value) => {
                    i += 1;
                    value.clone()
                }
                None => continue,
            },
            _ => continue,
        };
        out.push(paths(&value, &[String::new()]));
    }
    out.retain(|p| !p.is_empty());
    out
}

/// The paths of the repository mocha may take the module `name` for, from each of `dirs`:
/// mocha loads a name that is a file (or is one with `.js`) as a path, from the directory it
/// runs in, before it looks for a package; so a bare name counts as a path too (jest's
/// [`jest_files::alternatives`] for `./name`).
fn paths(name: &str, dirs: &[String]) -> Vec<String> {
    if name.starts_with('/') || name.starts_with("<rootDir>") {
        return Vec::new();
    }
    let relative = if name.starts_with("./") || name.starts_with("../") {
        name.to_string()
    } else {
        format!("./{name}")
    };
    jest_files::alternatives(&relative, dirs)
}

/// The modules mocha's configuration file `path` (its bytes `content`) names, each as the
/// paths it may be, from the directory mocha runs in (the root) and the file's own. A JSON
/// file (`.jsonc` with its comments) is parsed, a `package.json` by its `mocha` key; a YAML
/// one is read for its top-level keys (a scalar, a `- item` list, a `[a, b]` list); a
/// JavaScript one as jest's is (src/workflow/jest_files.rs): its export's literal data, else
/// every string written in it. `Err` with why where a key that names modules is set to
/// something this reader cannot read as written out.
pub fn named(path: &str, content: &[u8]) -> Result<Vec<Vec<String>>, String> {
    let text = String::from_utf8_lossy(content);
    let file = path.rsplit('/').next().unwrap_or(path);
    let dir = path.rsplit_once('/').map_or("", |(d, _)| d).to_string();
    let dirs = if dir.is_empty() {
        vec![dir]
    } else {
        vec![String::new(), dir]
    };
    let mut values: Vec<Value> = Vec::new();
    if file.ends_with(".json") || file.ends_with(".jsonc") {
        let Ok(json) = serde_json::from_str::<Value>(&without_comments(&text)) else {
            return Ok(Vec::new());
        };
        let config = if file == "package.json" {
            match json.get("mocha") {
                Some(mocha) => mocha.clone(),
                None => return Ok(Vec::new()),
            }
        } else {
            json
        };
        values.extend(KEYS.iter().filter_map(|k| config.get(*k).cloned()));
    } else if file.ends_with(".yaml") || file.ends_with(".yml") {
        for (key, value) in yaml_keys(&text) {
            if KEYS.contains(&key.as_str()) {
                match value {
                    Some(value) => values.push(value),
                    None => return Err(format!("{path} sets `{key}` otherwise than written out")),
                }
            }
        }
    } else {
        match jest_files::exported_literal(&text) {
            Some(config) => values.extend(KEYS.iter().filter_map(|k| config.get(*k).cloned())),
            None => {
                jest_files::keys_written_out(path, &text, KEYS)?;
                values.extend(
                    jest_files::string_literals(&text)
                        .into_iter()
                        .map(Value::String),
                );
            }
        }
    }
    let mut out = Vec::new();
    for value in values {
        let names = match value {
            Value::String(s) => vec![s],
            Value::Array(items) => items
                .iter()
                .filter_map(|i| i.as_str().map(str::to_string))
                .collect(),
            _ => Vec::new(),
        };
        for name in names {
            let alts = paths(&name, &dirs);
            if !alts.is_empty() {
                out.push(alts);
            }
        }
    }
    Ok(out)
}

/// `text` without its `//` and `/* */` comments (outside strings): JSONC as JSON.
fn without_comments(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars().peekable();
    let mut in_string = false;
    while let Some(c) = chars.next() {
        if in_string {
            out.push(c);
            match c {
                '\\' => out.extend(chars.next()),
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match (c, chars.peek()) {
            ('"', _) => {
                in_string = true;
                out.push(c);
            }
            ('/', Some('/')) => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            ('/', Some('*')) => {
                chars.next();
                let mut last = ' ';
                for c in chars.by_ref() {
                    if last == '*' && c == '/' {
                        break;
                    }
                    last = c;
                }
                out.push(' ');
            }
            _ => out.push(c),
        }
    }
    out
}

/// The top-level keys of the YAML `text` with their values where this reader reads them: a
/// scalar (plain or quoted), a flow list of scalars, or a block list of `- scalar` lines
/// below the key; `None` for anything else (a mapping, an anchor, a multi-line string).
fn yaml_keys(text: &str) -> Vec<(String, Option<Value>)> {
    let scalar = |s: &str| -> Option<String> {
        let s = s.trim();
        let s = match s.find(" #") {
            Some(at) if !s.starts_with(['"', '\'']) => s[..at].trim_end(),
            _ => s,
        };
        if s.is_empty() || s.starts_with(['&', '*', '|', '>', '{', '!']) {
            return None;
        }
        for q in ['"', '\''] {
            if let Some(inner) = s.strip_prefix(q) {
                // The closing quote, then nothing or a comment.
                let (inner, after) = inner.split_once(q)?;
                let after = after.trim();
                return (after.is_empty() || after.starts_with('#')).then(|| inner.to_string());
            }
        }
        Some(s.to_string())
    };
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        i += 1;
        if line.starts_with([' ', '\t', '#', '-']) || line.trim().is_empty() {
            continue;
        }
        let Some((key, rest)) = line.split_once(':') else {
            continue;
        };
        let key = key.trim().trim_matches(['"', '\'']).to_string();
        let rest = rest.trim();
        let value = if rest.is_empty() || rest.starts_with('#') {
            // A block list below, its items indented or not.
            let mut items = Vec::new();
            let mut readable = true;
            while i < lines.len() {
                let next = lines[i].trim_start();
                if next.is_empty() || next.starts_with('#') {
                    i += 1;
                    continue;
                }
                if !(lines[i].starts_with([' ', '\t', '-'])) {
                    break;
                }
                i += 1;
                match next.strip_prefix('-').and_then(&scalar) {
                    Some(item) => items.push(Value::String(item)),
                    None => readable = false,
                }
            }
            readable.then_some(Value::Array(items))
        } else if let Some(inner) = rest.strip_prefix('[') {
            inner.trim_end().strip_suffix(']').and_then(|inner| {
                inner
                    .split(',')
                    .filter(|s| !s.trim().is_empty())
                    .map(|s| scalar(s).map(Value::String))
                    .collect::<Option<Vec<_>>>()
                    .map(Value::Array)
            })
        } else {
            scalar(rest).map(Value::String)
        };
        out.push((key, value));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The first path of each module named: as written.
    fn firsts(named: &[Vec<String>]) -> Vec<String> {
        named.iter().map(|a| a[0].clone()).collect()
    }

    #[test]
    fn the_modules_mochas_command_line_names_are_read() {
        assert_eq!(
            firsts(&named_by_command(
                "npx mocha -r ./test/setup.js --require=hooks --file test/first.js --ui bdd -R spec --config ci/.mocharc.yml"
            )),
            // `bdd` and `spec` are mocha's own, unless the repository has such a file.
            [
                "test/setup.js",
                "hooks",
                "test/first.js",
                "bdd",
                "spec",
                "ci/.mocharc.yml"
            ]
        );
        assert!(named_by_command("mocha --require /abs/x.js test").is_empty());
        let hooks = &named_by_command("mocha -r hooks")[0];
        assert!(hooks.contains(&"hooks.js".to_string()), "{hooks:?}");
    }

    #[test]
    fn every_configuration_file_of_mocha_is_read() {
        let setup = vec!["test/setup.js".to_string(), "test/hooks.js".to_string()];
        for (path, text) in [
            (
                ".mocharc.json",
                r#"{"require": ["./test/setup.js", "test/hooks.js"], "spec": "test/**/*.js"}"#,
            ),
            (
                ".mocharc.jsonc",
                "{\n  // the hooks\n  \"require\": [\"./test/setup.js\", /* and */ \"test/hooks.js\"]\n}",
            ),
            (
                ".mocharc.yml",
                "spec: test\nrequire:\n  - ./test/setup.js\n  - 'test/hooks.js'  # hooks\nrecursive: true\n",
            ),
            (
                ".mocharc.yaml",
                "require: [./test/setup.js, \"test/hooks.js\"]\n",
            ),
            (
                ".mocharc.js",
                "module.exports = {\n  require: ['./test/setup.js', 'test/hooks.js'],\n};\n",
            ),
            (
                "package.json",
                r#"{"name": "calc", "mocha": {"require": "./test/setup.js", "file": ["test/hooks.js"]}}"#,
            ),
        ] {
            assert_eq!(
                firsts(&named(path, text.as_bytes()).expect(path)),
                setup,
                "{path}"
            );
        }
        assert_eq!(
            named("package.json", br#"{"name": "calc"}"#),
            Ok(Vec::new())
        );
        // A configuration in a directory: from the root (where mocha runs) and from its own.
        let sub = named("web/.mocharc.json", br#"{"require": "./setup.js"}"#).expect("json");
        assert_eq!(sub[0][0], "setup.js");
        assert!(sub[0].contains(&"web/setup.js".to_string()));
    }

    #[test]
    fn a_configuration_that_names_modules_otherwise_is_refused() {
        assert!(named(".mocharc.yml", b"require: *hooks\n").is_err());
        assert!(
            named(
                ".mocharc.js",
                b"const hooks = require('./list');\nmodule.exports = { require: hooks };\n"
            )
            .is_err()
        );
        // Computed, with the values written out: every string counts.
        let js = b"const base = require('./base.mocharc');\nmodule.exports = { ...base, require: ['./test/setup.js'] };\n";
        assert_eq!(
            firsts(&named(".mocharc.js", js).expect("written out")),
            ["base.mocharc", "test/setup.js"]
        );
    }
}
