//! What mocha loads around a test besides the test (docs/integrity.md, "Per-test
//! evidence"): its configuration files (`.mocharc.*`, a `--config` file) and the modules they
//! and the command name with `require` and `file`, which mocha runs before any test (a
//! `--require` that wraps `it` makes the pinned test report passed though its body never
//! ran). Pure: the engine gives the files' bytes.

use serde_json::Value;

/// The files mocha looks for its configuration in, in the directory it runs in, in the order
/// it prefers them.
pub const CONFIG_FILES: &[&str] = &[
    ".mocharc.js",
    ".mocharc.cjs",
    ".mocharc.yaml",
    ".mocharc.yml",
    ".mocharc.jsonc",
    ".mocharc.json",
];

/// The extensions mocha's `require` tries after a path as written.
const EXTENSIONS: &[&str] = &["", ".js", ".cjs", ".mjs"];

/// Whether `path` is one of mocha's configuration files ([`CONFIG_FILES`]).
pub fn is_config(path: &str) -> bool {
    CONFIG_FILES.contains(&path.rsplit('/').next().unwrap_or(path))
}

/// The option names whose value is a module mocha loads before the tests (`--require`,
/// `-r`, `--file`), and those whose value is a configuration file (`--config`).
const MODULE_OPTIONS: &[&str] = &["--require", "-r", "--file"];
const CONFIG_OPTIONS: &[&str] = &["--config"];

/// The files of the repository a mocha command line names itself: each module a
/// `--require`/`-r`/`--file` loads ([`module_files`]) and the configuration file of
/// `--config` ([`configs_named_by_command`]), `=`-joined too. Words are split at white
/// space, quotes dropped.
pub fn named_by_command(command: &str) -> Vec<String> {
    let (mut out, configs) = options(command);
    out.extend(configs);
    out.sort();
    out.dedup();
    out
}

/// The configuration files a mocha command line names with `--config`.
pub fn configs_named_by_command(command: &str) -> Vec<String> {
    options(command).1
}

/// The module files and the configuration files a mocha command line names.
fn options(command: &str) -> (Vec<String>, Vec<String>) {
    let words: Vec<String> = command
        .split_whitespace()
        .map(|w| w.replace(['\'', '"'], ""))
        .collect();
    let (mut out, mut configs) = (Vec::new(), Vec::new());
    let mut i = 0;
    while i < words.len() {
        let word = words[i].as_str();
        i += 1;
        let (option, value) = match word.split_once('=') {
            Some((option, value)) if option.starts_with("--") => (option, Some(value.to_string())),
            _ => (word, None),
        };
        let module = MODULE_OPTIONS.contains(&option);
        if !module && !CONFIG_OPTIONS.contains(&option) {
            continue;
        }
        let value = match value {
            Some(value) => value,
            None => match words.get(i) {
                Some(value) => {
                    i += 1;
                    value.clone()
                }
                None => continue,
            },
        };
        if module {
            out.extend(module_files(&value));
        } else if let Some(path) = inside(&value) {
            configs.push(path);
        }
    }
    (out, configs)
}

/// The files a module name mocha loads may be, relative to the directory it runs in: the
/// path as written and with each extension `require` tries ([`EXTENSIONS`]), and a
/// directory's `index`. A name that is a package (`ts-node/register`) is looked for as a path
/// too (mocha loads a file of that path first, where there is one); a path outside the
/// repository has none here.
pub fn module_files(name: &str) -> Vec<String> {
    let Some(path) = inside(name) else {
        return Vec::new();
    };
    let mut out: Vec<String> = EXTENSIONS.iter().map(|e| format!("{path}{e}")).collect();
    out.extend(EXTENSIONS[1..].iter().map(|e| format!("{path}/index{e}")));
    out
}

/// `path` relative to the repository's root, where it is inside it.
fn inside(path: &str) -> Option<String> {
    if path.is_empty() || path.starts_with('/') || path.starts_with('~') || path.contains('$') {
        return None;
    }
    super::repo_path::within("", path).filter(|p| !p.is_empty())
}

/// The modules mocha's configuration file `path` (its bytes `content`) loads with `require`
/// and `file` ([`module_files`]), and where it names one that only running it tells, why. A
/// JSON or JSONC file (comments dropped) and a `package.json` (its `mocha` key) are parsed;
/// a YAML file is read for its `require:` and `file:` keys, a value or a list of `- ` items;
/// a JavaScript one counts every string written in it (what it computes, only running it
/// tells).
pub fn named_by_config(path: &str, content: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(content);
    let name = path.rsplit('/').next().unwrap_or(path);
    let mut names: Vec<String> = Vec::new();
    if name.ends_with(".js") || name.ends_with(".cjs") || name.ends_with(".mjs") {
        names.extend(strings_written(&text));
    } else if name.ends_with(".yaml") || name.ends_with(".yml") {
        names.extend(yaml_values(&text, &["require", "file"]));
    } else {
        let json: Option<Value> = serde_json::from_str(&without_comments(&text)).ok();
        let options = if name == "package.json" {
            json.and_then(|j| j.get("mocha").cloned())
        } else {
            json
        };
        if let Some(options) = options {
            for key in ["require", "file"] {
                match options.get(key) {
                    Some(Value::String(s)) => names.push(s.clone()),
                    Some(Value::Array(items)) => {
                        names.extend(items.iter().filter_map(|v| v.as_str().map(str::to_string)))
                    }
                    _ => {}
                }
            }
        }
    }
    let mut out: Vec<String> = names.iter().flat_map(|n| module_files(n)).collect();
    out.sort();
    out.dedup();
    out
}

/// The quoted strings of a JavaScript text, as written (escapes kept).
fn strings_written(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if matches!(c, '\'' | '"' | '`') {
            let mut s = String::new();
            while let Some(q) = chars.next() {
                if q == c {
                    break;
                }
                if q == '\\' {
                    chars.next();
                    continue;
                }
                s.push(q);
            }
            out.push(s);
        }
    }
    out
}

/// JSONC as JSON: `//` and `/* */` comments outside strings dropped.
fn without_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let mut in_string = false;
    while let Some(c) = chars.next() {
        if in_string {
            out.push(c);
            if c == '\\' {
                if let Some(next) = chars.next() {
                    out.push(next);
                }
            } else if c == '"' {
                in_string = false;
            }
            continue;
        }
        match (c, chars.peek()) {
            ('"', _) => {
                in_string = true;
                out.push(c);
            }
            ('/', Some('/')) => {
                for n in chars.by_ref() {
                    if n == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            ('/', Some('*')) => {
                chars.next();
                let mut last = ' ';
                for n in chars.by_ref() {
                    if last == '*' && n == '/' {
                        break;
                    }
                    last = n;
                }
            }
            _ => out.push(c),
        }
    }
    out
}

/// The values of the top-level `keys` of a YAML text: `key: value`, `key: [a, b]`, or
/// `key:` followed by `- item` lines; quotes dropped.
fn yaml_values(text: &str, keys: &[&str]) -> Vec<String> {
    let unquote = |s: &str| s.trim().trim_matches(|c| c == '\'' || c == '"').to_string();
    let mut out = Vec::new();
    let mut in_list = false;
    for line in text.lines() {
        let line = line.split(" #").next().unwrap_or(line).trim_end();
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
            continue;
        }
        if in_list && let Some(item) = line.trim_start().strip_prefix("- ") {
            out.push(unquote(item));
            continue;
        }
        in_list = false;
        if line.starts_with([' ', '\t']) {
            continue;
        }
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        if !keys.contains(&unquote(key).as_str()) {
            continue;
        }
        let value = value.trim();
        if value.is_empty() {
            in_list = true;
        } else if let Some(list) = value.strip_prefix('[').and_then(|v| v.strip_suffix(']')) {
            out.extend(list.split(',').map(unquote).filter(|s| !s.is_empty()));
        } else {
            out.push(unquote(value));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn files(names: &[&str]) -> Vec<String> {
        let mut out: Vec<String> = names.iter().flat_map(|n| module_files(n)).collect();
        out.sort();
        out
    }

    #[test]
    fn a_required_module_is_each_file_require_may_load() {
        assert_eq!(
            module_files("./test/setup"),
            [
                "test/setup",
                "test/setup.js",
                "test/setup.cjs",
                "test/setup.mjs",
                "test/setup/index.js",
                "test/setup/index.cjs",
                "test/setup/index.mjs",
            ]
        );
        assert_eq!(module_files("/etc/x.js"), Vec::<String>::new());
        assert_eq!(module_files("../x.js"), Vec::<String>::new());
    }

    /// `--require`, `-r` and `--file` load a module before the tests; `--config` names the
    /// configuration; other options name nothing.
    #[test]
    fn the_files_a_mocha_command_names_are_its_required_modules_and_config() {
        let mut expected = files(&["test/setup.js", "hooks", "test/fixture.js"]);
        expected.push("ci/mocharc.yml".to_string());
        expected.sort();
        assert_eq!(
            named_by_command(
                "npx mocha --require test/setup.js -r ./hooks --file=test/fixture.js \
                 --config ci/mocharc.yml --reporter spec --timeout 500 test"
            ),
            expected
        );
        assert_eq!(
            named_by_command("mocha --require /abs/x.js -r ../up.js test"),
            Vec::<String>::new()
        );
    }

    /// Each configuration's `require` and `file`, as a string or a list: JSON (with
    /// comments), `package.json`'s `mocha` key, YAML, and every string a JavaScript one
    /// writes.
    #[test]
    fn a_mocha_configuration_names_the_modules_it_requires() {
        let both = files(&["test/setup.js", "test/fixture.js"]);
        let cases = [
            (
                ".mocharc.json",
                "{\"require\": \"test/setup.js\", \"file\": [\"test/fixture.js\"], \"spec\": \"test\"}",
            ),
            (
                ".mocharc.jsonc",
                "{\n  // set up\n  \"require\": [\"test/setup.js\"], /* and */ \"file\": \"test/fixture.js\"\n}",
            ),
            (
                "package.json",
                "{\"name\": \"calc\", \"mocha\": {\"require\": [\"test/setup.js\"], \"file\": \"test/fixture.js\"}}",
            ),
            (
                ".mocharc.yml",
                "spec: test\nrequire:\n  - 'test/setup.js'\nfile: [test/fixture.js]  # the fixture\n",
            ),
            (
                ".mocharc.js",
                "module.exports = { require: ['test/setup.js'], file: `test/fixture.js` };\n",
            ),
        ];
        for (path, text) in cases {
            assert_eq!(named_by_config(path, text.as_bytes()), both, "{path}");
        }
        assert_eq!(
            named_by_config("package.json", b"{\"name\": \"calc\", \"jest\": {}}"),
            Vec::<String>::new()
        );
        assert!(is_config(".mocharc.yml") && is_config("web/.mocharc.cjs"));
        assert!(!is_config("mocharc.yml") && !is_config("package.json"));
    }

    /// Whatever a command or a configuration holds, the readers end without a panic: the
    /// agent writes both.
    #[test]
    fn any_command_or_configuration_is_read_without_a_panic() {
        use proptest::prelude::*;
        let text = prop::collection::vec(
            prop_oneof![
                Just("--require".to_string()),
                Just("-r".to_string()),
                Just("--file=".to_string()),
                Just("--config".to_string()),
                Just("require:".to_string()),
                Just("- ".to_string()),
                Just("\n".to_string()),
                Just("\"".to_string()),
                Just("'".to_string()),
                Just("{\"mocha\": {\"require\": [".to_string()),
                Just("]}}".to_string()),
                Just("./".to_string()),
                Just("é😀".to_string()),
                ".{0,6}",
            ],
            0..20,
        )
        .prop_map(|words| words.join(" "));
        let config = prop_oneof![
            Just(".mocharc.yml"),
            Just(".mocharc.json"),
            Just(".mocharc.js"),
            Just("package.json"),
            Just("x/.mocharc.yaml"),
        ];
        proptest!(ProptestConfig::with_cases(512), |(text in text, path in config)| {
            let _ = named_by_command(&text);
            let _ = configs_named_by_command(&text);
            let _ = module_files(&text);
            let _ = named_by_config(path, text.as_bytes());
        });
    }
}
