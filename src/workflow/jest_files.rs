//! What jest's configuration names that jest loads around a test (docs/integrity.md,
//! "Per-test evidence"): every string of it that may name a file of the repository (a setup
//! file, `globalSetup`, a `transform` module, a reporter, a resolver, a `testEnvironment`, a
//! preset, a project's configuration, …), read from a JSON configuration, the `jest` key of a
//! `package.json`, or a JavaScript one's literal data. Pure: the engine gives the bytes and
//! tells which of the paths are files of its tree.

use serde_json::Value;

/// The keys whose strings name no module jest loads around a test: the directories and
/// patterns it searches, the modules a test requires in place of others (`moduleNameMapper`:
/// the code under test, which a GREEN step may change), the coverage it collects, names.
const NOT_MODULES: &[&str] = &[
    "rootDir",
    "roots",
    "modulePaths",
    "moduleDirectories",
    "moduleNameMapper",
    "moduleFileExtensions",
    "collectCoverageFrom",
    "coverageDirectory",
    "coveragePathIgnorePatterns",
    "cacheDirectory",
    "testMatch",
    "testRegex",
    "testPathIgnorePatterns",
    "modulePathIgnorePatterns",
    "watchPathIgnorePatterns",
    "transformIgnorePatterns",
    "unmockedModulePathPatterns",
    "forceCoverageMatch",
    "displayName",
    "id",
];

/// The keys that name modules jest loads: in a JavaScript configuration that is no literal
/// data, each must be followed by a value written out, which this reader can read.
pub const MODULE_KEYS: &[&str] = &[
    "setupFiles",
    "setupFilesAfterEnv",
    "globalSetup",
    "globalTeardown",
    "testEnvironment",
    "testRunner",
    "runner",
    "transform",
    "reporters",
    "snapshotResolver",
    "resolver",
    "testSequencer",
    "testResultsProcessor",
    "watchPlugins",
    "dependencyExtractor",
    "hasteImplModulePath",
    "prettierPath",
    "preset",
    "projects",
];

/// The extensions jest resolves a module path with (its default `moduleFileExtensions`), in
/// its order.
const EXTENSIONS: &[&str] = &["js", "mjs", "cjs", "jsx", "ts", "tsx", "json", "node"];

/// What a jest configuration names: each string that may name a file, as the paths of the
/// repository jest may resolve it to ([`alternatives`]); the preset and project
/// configuration files it names, read in turn as configurations; and, for a configuration
/// that computes, the files its strings may name, read in turn as the modules it may require.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Named {
    pub files: Vec<Vec<String>>,
    pub configs: Vec<Vec<String>>,
    pub required: Vec<Vec<String>>,
}

/// The configuration file a jest command line names with `--config FILE` / `-c FILE` (each
/// `=`-joined form too; `-cFILE`), which jest reads instead of looking for one: a path of the
/// repository, from the directory the command runs in. Configuration written inline (`{…}`),
/// an absolute path or one out of the repository names none. Words are split at white
/// space, quotes dropped.
pub fn named_by_command(command: &str) -> Vec<String> {
    let words: Vec<String> = command
        .split_whitespace()
        .map(|w| w.replace(['\'', '"'], ""))
        .collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < words.len() {
        let word = words[i].as_str();
        i += 1;
        let value = if let Some(v) = word.strip_prefix("--config=") {
            v.to_string()
        } else if word == "--config" || word == "-c" {
            match words.get(i) {
                Some(v) => {
                    i += 1;
                    v.clone()
                }
                None => continue,
            }
        } else if let Some(v) = word.strip_prefix("-c").filter(|v| !v.is_empty()) {
            v.trim_start_matches('=').to_string()
        } else {
            continue;
        };
        if value.starts_with(['{', '/']) {
            continue;
        }
        if let Some(path) = resolve("", &value).filter(|p| !p.is_empty()) {
            out.push(path);
        }
    }
    out
}

/// What the jest configuration file `path` (its bytes `content`) names, its relative paths
/// and `<rootDir>` resolved from each of `dirs` (the configuration's own directory, and for a
/// preset the including configuration's: jest resolves a preset's paths from the project's
/// root) and from the directory its own `rootDir` names. A JSON file is parsed (a
/// `package.json` by its `jest` key); a JavaScript one whose export is an object written out
/// as literal data is read as that data; any other JavaScript configuration counts every
/// string written in it, and is `Err` with why where one of [`MODULE_KEYS`] is set to
/// something other than a value written out (a name, a call), which only running it tells;
/// unless `refuse` is false: a module such a configuration requires (`require('./base')`),
/// read in turn for its strings, is code of any kind, whose names are no settings.
pub fn named(path: &str, content: &[u8], dirs: &[String], refuse: bool) -> Result<Named, String> {
    let text = String::from_utf8_lossy(content);
    let mut out = Named::default();
    let data = if path.ends_with(".json") {
        let Ok(json) = serde_json::from_str::<Value>(&text) else {
            return Ok(out);
        };
        if path.rsplit('/').next() == Some("package.json") {
            match json.get("jest") {
                Some(jest) => Some(jest.clone()),
                None => return Ok(out),
            }
        } else {
            Some(json)
        }
    } else {
        exported_literal(&text)
    };
    let mut dirs = dirs.to_vec();
    if let Some(root) = data
        .as_ref()
        .and_then(|d| d.get("rootDir"))
        .and_then(Value::as_str)
    {
        let from: Vec<String> = dirs.clone();
        for dir in from {
            dirs.extend(resolve(&dir, root));
        }
    }
    match data {
        Some(data) => walk(&data, &dirs, &mut out),
        None => {
            // Every string may name a file, and a file it names may be configuration the
            // export is built from (`...require('./base.config')`): read in turn.
            for s in string_literals(&text) {
                let alts = alternatives(&s, &dirs);
                out.files.push(alts.clone());
                out.required.push(alts);
            }
            let keys = match module_keys(path, &text) {
                Ok(keys) => keys,
                Err(why) if refuse => return Err(why),
                Err(_) => Vec::new(),
            };
            for (key, value) in keys {
                if matches!(key, "preset" | "projects") {
                    walk_key(key, &value, &dirs, &mut out);
                }
            }
        }
    }
    out.files.retain(|a| !a.is_empty());
    out.configs.retain(|a| !a.is_empty());
    out.required.retain(|a| !a.is_empty());
    Ok(out)
}

/// Every string of `value`, at any depth, but under [`NOT_MODULES`]; `preset` and `projects`
/// name configurations too.
fn walk(value: &Value, dirs: &[String], out: &mut Named) {
    match value {
        Value::String(s) => out.files.push(alternatives(s, dirs)),
        Value::Array(items) => items.iter().for_each(|v| walk(v, dirs, out)),
        Value::Object(map) => {
            for (key, value) in map {
                walk_key(key, value, dirs, out);
            }
        }
        _ => {}
    }
}

fn walk_key(key: &str, value: &Value, dirs: &[String], out: &mut Named) {
    if NOT_MODULES.contains(&key) {
        return;
    }
    match (key, value) {
        // jest looks for `<path>/jest-preset.json` (or `.js`) for a path that does not
        // begin with a dot, and for the path itself where it does.
        ("preset", Value::String(s)) => {
            let mut alts = alternatives(s, dirs);
            alts.extend(alternatives(&format!("{s}/jest-preset"), dirs));
            out.files.push(alts.clone());
            out.configs.push(alts);
        }
        ("projects", Value::Array(items)) => {
            for item in items {
                match item {
                    // A directory's own configuration is found by its name: its `index.js` is
                    // no configuration (a package's code, maybe).
                    Value::String(s) => {
                        let alts = resolutions(s, dirs, false);
                        out.files.push(alts.clone());
                        out.configs.push(alts);
                    }
                    other => walk(other, dirs, out),
                }
            }
        }
        _ => walk(value, dirs, out),
    }
}

/// The paths of the repository jest may resolve the string `s` to, from each of `dirs`:
/// `<rootDir>/x`, `./x`, `../x`, and a path written bare that has a `/` or a file's
/// extension (found through `modulePaths`, say); each as written, with each of jest's
/// [`EXTENSIONS`], and as a directory's `index`. A package's name (`babel-jest`, `node`), an
/// absolute path or one out of the repository names none.
pub fn alternatives(s: &str, dirs: &[String]) -> Vec<String> {
    resolutions(s, dirs, true)
}

/// [`alternatives`], a directory's `index` among them where `index` says so.
fn resolutions(s: &str, dirs: &[String], index: bool) -> Vec<String> {
    // A pattern, a URL, a line of text: no path.
    if s.is_empty() || s.contains(['\n', '*', '?', '\\', ':', '$']) {
        return Vec::new();
    }
    let relative = if let Some(rest) = s.strip_prefix("<rootDir>") {
        rest.trim_start_matches('/')
    } else if s.starts_with("./") || s.starts_with("../") {
        s
    } else if s.starts_with('/') {
        return Vec::new();
    } else if s.contains('/') || has_extension(s) {
        s
    } else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for dir in dirs {
        let Some(base) = resolve(dir, relative) else {
            continue;
        };
        if base.is_empty() {
            continue;
        }
        out.push(base.clone());
        for ext in EXTENSIONS {
            out.push(format!("{base}.{ext}"));
        }
        for ext in EXTENSIONS.iter().filter(|_| index) {
            out.push(format!("{base}/index.{ext}"));
        }
    }
    out.dedup();
    out
}

fn has_extension(s: &str) -> bool {
    s.rsplit_once('.')
        .is_some_and(|(stem, ext)| !stem.is_empty() && EXTENSIONS.contains(&ext))
}

/// `relative` from the directory `dir` of the repository (`""`: its root), `.` and `..`
/// resolved; `None` out of it.
fn resolve(dir: &str, relative: &str) -> Option<String> {
    super::repo_path::within(dir, relative)
}

/// The object a JavaScript configuration exports (`module.exports = {…}`, `export default
/// {…}`) when it is literal data to its end: `None` where it is anything else, or where code
/// follows that may change it.
pub(crate) fn exported_literal(text: &str) -> Option<Value> {
    let at = ["module.exports", "export default"]
        .iter()
        .filter_map(|m| text.find(m).map(|i| (i, m.len())))
        .min()?;
    let mut p = Parser {
        s: text.as_bytes(),
        i: at.0 + at.1,
    };
    p.skip();
    if text[..at.0 + at.1].ends_with("module.exports") {
        if p.peek() != Some(b'=') {
            return None;
        }
        p.i += 1;
    }
    let value = p.value()?;
    if !value.is_object() {
        return None;
    }
    p.skip();
    if p.peek() == Some(b';') {
        p.i += 1;
    }
    p.skip();
    (p.i == p.s.len()).then_some(value)
}

/// Each of [`MODULE_KEYS`] set in the JavaScript `text`, with its value written out; `Err`
/// where one is set otherwise (`{ transform }`, `globalSetup: path.join(…)`,
/// `config.transform = f()`).
fn module_keys(path: &str, text: &str) -> Result<Vec<(&'static str, Value)>, String> {
    keys_written_out(path, text, MODULE_KEYS)
}

/// Each of `keys` set in the JavaScript `text`, with its value written out; `Err` where one
/// is set otherwise, which only running it tells.
pub(crate) fn keys_written_out(
    path: &str,
    text: &str,
    keys: &[&'static str],
) -> Result<Vec<(&'static str, Value)>, String> {
    let mut out = Vec::new();
    let ident = |c: char| c.is_alphanumeric() || c == '_' || c == '$';
    for key in keys {
        let mut from = 0;
        while let Some(found) = text[from..].find(key) {
            let at = from + found;
            from = at + key.len();
            let before = &text[..at];
            let line = before[before.rfind('\n').map_or(0, |nl| nl + 1)..].trim_start();
            let after = &text[at + key.len()..];
            // `setupFiles` is a prefix of `setupFilesAfterEnv`; a line commented out is no
            // setting.
            if after.starts_with(ident)
                || before.ends_with(ident)
                || line.starts_with("//")
                || line.starts_with("/*")
                || line.starts_with('*')
            {
                continue;
            }
            // A quoted key (`'transform': …`) is one only where its quote closes at once;
            // the word inside another string (`'jest-runner'`) is none.
            let quoted = before.ends_with(['\'', '"']);
            let after = match (quoted, after.strip_prefix(['\'', '"'])) {
                (true, Some(after)) => after,
                (false, None) => after,
                _ => continue,
            };
            let rest = after.trim_start();
            let refused =
                || format!("{path} sets `{key}` to something other than a value written out");
            // `{ transform }`: the value a variable's.
            if !quoted && rest.starts_with([',', '}']) {
                return Err(refused());
            }
            let value = if let Some(v) = rest.strip_prefix(':') {
                v
            } else if let Some(v) = rest
                .strip_prefix('=')
                .filter(|v| before.ends_with('.') && !v.starts_with(['=', '>']))
            {
                // `config.globalSetup = …` sets it; `const transform = …` names a variable,
                // whose use as the key's value (`{ transform }`) is refused where it is.
                v
            } else {
                continue;
            };
            let mut p = Parser {
                s: value.as_bytes(),
                i: 0,
            };
            let Some(value) = p.value() else {
                return Err(refused());
            };
            // What follows a value written out ends it: `'./a' + b` is computed.
            p.skip();
            if !matches!(p.peek(), None | Some(b',' | b'}' | b';' | b'\n' | b')')) {
                return Err(refused());
            }
            out.push((*key, value));
        }
    }
    Ok(out)
}

/// Every string written in the JavaScript `text` (quoted, or a template with no `${`),
/// comments aside.
pub(crate) fn string_literals(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut p = Parser {
        s: text.as_bytes(),
        i: 0,
    };
    while p.i < p.s.len() {
        p.skip();
        match p.peek() {
            Some(b'\'' | b'"' | b'`') => match p.string() {
                Some(s) => out.push(s),
                None => p.i += 1,
            },
            Some(_) => p.i += 1,
            None => break,
        }
    }
    out
}

/// A reader of JavaScript literal data: objects, arrays, strings, numbers and the constant
/// names, comments and trailing commas allowed; anything else (a name, a call, a spread, a
/// template that interpolates) is no literal.
struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    /// Past white space and comments.
    fn skip(&mut self) {
        loop {
            match (self.peek(), self.s.get(self.i + 1)) {
                (Some(c), _) if c.is_ascii_whitespace() => self.i += 1,
                (Some(b'/'), Some(b'/')) => {
                    while self.peek().is_some_and(|c| c != b'\n') {
                        self.i += 1;
                    }
                }
                (Some(b'/'), Some(b'*')) => {
                    self.i += 2;
                    while self.i < self.s.len() && !self.s[self.i..].starts_with(b"*/") {
                        self.i += 1;
                    }
                    self.i = (self.i + 2).min(self.s.len());
                }
                _ => return,
            }
        }
    }

    fn value(&mut self) -> Option<Value> {
        self.skip();
        match self.peek()? {
            b'{' => {
                self.i += 1;
                let mut map = serde_json::Map::new();
                loop {
                    self.skip();
                    if self.peek()? == b'}' {
                        self.i += 1;
                        return Some(Value::Object(map));
                    }
                    let key = match self.peek()? {
                        b'\'' | b'"' | b'`' => self.string()?,
                        _ => self.word()?,
                    };
                    self.skip();
                    if self.peek()? != b':' {
                        return None;
                    }
                    self.i += 1;
                    let value = self.value()?;
                    map.insert(key, value);
                    self.skip();
                    match self.peek()? {
                        b',' => self.i += 1,
                        b'}' => {}
                        _ => return None,
                    }
                }
            }
            b'[' => {
                self.i += 1;
                let mut items = Vec::new();
                loop {
                    self.skip();
                    if self.peek()? == b']' {
                        self.i += 1;
                        return Some(Value::Array(items));
                    }
                    items.push(self.value()?);
                    self.skip();
                    match self.peek()? {
                        b',' => self.i += 1,
                        b']' => {}
                        _ => return None,
                    }
                }
            }
            b'\'' | b'"' | b'`' => self.string().map(Value::String),
            _ => {
                let word = self.word()?;
                let constant = matches!(word.as_str(), "true" | "false" | "null" | "undefined")
                    || word.starts_with(|c: char| c.is_ascii_digit() || c == '-' || c == '.');
                constant.then_some(Value::Null)
            }
        }
    }

    /// A name or a number, as written.
    fn word(&mut self) -> Option<String> {
        let start = self.i;
        while self
            .peek()
            .is_some_and(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'$' | b'.' | b'-'))
        {
            self.i += 1;
        }
        (self.i > start).then(|| String::from_utf8_lossy(&self.s[start..self.i]).into_owned())
    }

    /// A quoted string, its escapes taken as the character escaped.
    fn string(&mut self) -> Option<String> {
        let quote = self.peek()?;
        let start = self.i;
        self.i += 1;
        let mut bytes = Vec::new();
        loop {
            let c = self.peek()?;
            self.i += 1;
            match c {
                c if c == quote => break,
                b'\\' => {
                    bytes.push(self.peek()?);
                    self.i += 1;
                }
                b'\n' if quote != b'`' => return None,
                b'$' if quote == b'`' && self.peek() == Some(b'{') => {
                    self.i = start + 1;
                    return None;
                }
                c => bytes.push(c),
            }
        }
        Some(String::from_utf8_lossy(&bytes).into_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root() -> Vec<String> {
        vec![String::new()]
    }

    /// The first alternative of each string that names one: the path as written.
    fn firsts(named: &Named) -> Vec<String> {
        named.files.iter().map(|a| a[0].clone()).collect()
    }

    #[test]
    fn every_module_a_json_configuration_names_is_read() {
        let package = br#"{"name": "calc", "jest": {
            "setupFiles": ["./setup.js"],
            "setupFilesAfterEnv": ["<rootDir>/tests/after.js", "jest-extended"],
            "globalSetup": "<rootDir>/global.js",
            "testEnvironment": "./env",
            "transform": {"\\.js$": "<rootDir>/tx.js", "\\.ts$": ["./tsx.js", {"a": "b"}]},
            "reporters": ["default", ["<rootDir>/rep.js", {}]],
            "moduleNameMapper": {"^@/(.*)$": "<rootDir>/src/$1", "c": "<rootDir>/src/c.js"},
            "roots": ["<rootDir>/src"],
            "testEnvironmentOptions": {"url": "http://localhost/"}
        }}"#;
        let named = named("web/package.json", package, &["web".into()], true).expect("data");
        assert_eq!(
            firsts(&named),
            [
                "web/setup.js",
                "web/tests/after.js",
                "web/global.js",
                "web/env",
                "web/tx.js",
                "web/tsx.js",
                "web/rep.js",
            ]
        );
        assert!(named.configs.is_empty());
        let alts = &named.files[3];
        assert!(alts.contains(&"web/env.js".to_string()), "{alts:?}");
        assert!(alts.contains(&"web/env/index.js".to_string()), "{alts:?}");
        assert_eq!(
            super::named("package.json", br#"{"name": "calc"}"#, &root(), true),
            Ok(Named::default())
        );
    }

    #[test]
    fn a_preset_and_projects_are_configurations_read_in_turn() {
        let config = br#"{"preset": "./presets/base", "projects": ["<rootDir>/unit.config.json", {"globalSetup": "./g.js", "rootDir": "x"}, "<rootDir>/packages/*", "<rootDir>/packages/a"]}"#;
        let named = named("jest.config.json", config, &root(), true).expect("data");
        assert_eq!(named.configs.len(), 3, "{named:?}");
        assert!(named.configs[0].contains(&"presets/base.json".to_string()));
        assert!(named.configs[0].contains(&"presets/base/jest-preset.json".to_string()));
        assert_eq!(named.configs[1][0], "unit.config.json");
        assert!(
            named.configs[2][0] == "packages/a"
                && !named.configs[2].iter().any(|p| p.contains("/index.")),
            "a project's directory: {:?}",
            named.configs[2]
        );
        assert!(firsts(&named).contains(&"g.js".to_string()));
    }

    #[test]
    fn a_javascript_configuration_of_literal_data_is_read_as_data() {
        let js = br#"// jest's settings
module.exports = {
  setupFilesAfterEnv: ['./jest.setup.js'],
  'setupFiles': ["../x/s.js"],
  transform: { '^.+\\.js$': ['<rootDir>/tx.js', { babel: false }] },
  globalSetup: `./g.js`,
  moduleNameMapper: { '^app$': '<rootDir>/src/app.js' },
  verbose: true, testTimeout: 5000,
};
"#;
        let named = named("app/jest.config.js", js, &["app".into()], true).expect("literal");
        assert_eq!(
            firsts(&named),
            ["app/jest.setup.js", "x/s.js", "app/tx.js", "app/g.js"]
        );
        let esm = b"export default { globalSetup: './g.js' };\n";
        assert_eq!(
            firsts(&named_js(esm).expect("literal")),
            ["g.js"],
            "export default"
        );
    }

    fn named_js(text: &[u8]) -> Result<Named, String> {
        named("jest.config.js", text, &root(), true)
    }

    /// A configuration that computes: every string written in it counts, and a module key
    /// set to something that is not written out is refused.
    #[test]
    fn a_javascript_configuration_that_computes_counts_its_strings_and_refuses_names() {
        let computed = b"const path = require('path');\nconst base = require('./base.config');\nmodule.exports = { ...base, globalSetup: './g.js', transform: { x: require.resolve('./tx.js') } };\n";
        let err = named_js(computed).expect_err("a call");
        assert_eq!(
            err,
            "jest.config.js sets `transform` to something other than a value written out"
        );
        let spread = b"const base = require('./base.config');\nmodule.exports = { ...base, globalSetup: './g.js' };\n";
        let named = named_js(spread).expect("values written out");
        assert_eq!(firsts(&named), ["base.config", "g.js"]);
        assert_eq!(named.required[0][0], "base.config", "read in turn");
        let runner =
            b"const c = { runner: 'jest-runner', reporters: ['runner'] };\nmodule.exports = c;";
        assert_eq!(named_js(runner).map(|n| n.files.len()), Ok(0));
        for refused in [
            "module.exports = { setupFiles: files };",
            "module.exports = { setupFiles: [path.join(a)] };",
            "const setupFiles = f();\nmodule.exports = { setupFiles };",
            "const c = {};\nc.globalSetup = path.join(__dirname, 'g.js');\nmodule.exports = c;",
            "module.exports = { testEnvironment: './e' + '.js' };",
            "module.exports = { preset: `./${p}` };",
        ] {
            assert!(named_js(refused.as_bytes()).is_err(), "{refused}");
        }
        // A line commented out is no setting; a longer name is another.
        let fine = b"const c = {\n  // setupFiles: see below\n  setupFiles: ['./s.js'],\n  transformIgnorePatterns: x,\n};\nmodule.exports = c;";
        assert_eq!(firsts(&named_js(fine).expect("fine")), ["s.js"]);
    }

    #[test]
    fn the_configuration_a_jest_command_names_is_read() {
        assert_eq!(
            named_by_command("npx jest --ci --config ci/jest.ci.json tests"),
            ["ci/jest.ci.json"]
        );
        assert_eq!(
            named_by_command("jest --config=./a.json -c 'b.js' -cc.json"),
            ["a.json", "b.js", "c.json"]
        );
        assert!(
            named_by_command("jest --config {\"verbose\":true} -c /etc/j.json -c ../x.json --ci")
                .is_empty()
        );
    }

    #[test]
    fn a_string_names_a_path_only_where_jest_may_take_it_for_one() {
        let root = root();
        assert!(alternatives("babel-jest", &root).is_empty());
        assert!(alternatives("node", &root).is_empty());
        assert!(alternatives("/abs/x.js", &root).is_empty());
        assert!(alternatives("../x.js", &root).is_empty());
        assert_eq!(alternatives("<rootDir>/a.js", &root)[0], "a.js");
        assert_eq!(alternatives("tools/tx.js", &root)[0], "tools/tx.js");
        assert_eq!(alternatives("tx.js", &["sub".into()])[0], "sub/tx.js");
        assert_eq!(alternatives("../tx.js", &["sub".into()])[0], "tx.js");
    }
}
