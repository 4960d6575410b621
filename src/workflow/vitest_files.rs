//! What vitest reads around a test besides the test (docs/integrity.md, "Per-test
//! evidence"): its configuration files, looked for in the directory it runs in
//! (`vitest.config.*`, else vite's own `vite.config.*`, and the `vitest.workspace.*` or
//! `vitest.projects.*` that lists its projects), and the one a `--config` names. Each is code
//! vitest runs before any test: one that mocks the module under test, or sets up a file that
//! wraps `test`, makes the pinned test report passed with the task's code never run. Pure.

/// The names vitest 3 looks for its configuration by, in its root: `vitest.config` and
/// `vite.config` with each extension it loads, and the projects' lists.
pub const CONFIG_FILES: &[&str] = &[
    "vitest.config.ts",
    "vitest.config.mts",
    "vitest.config.cts",
    "vitest.config.js",
    "vitest.config.mjs",
    "vitest.config.cjs",
    "vite.config.ts",
    "vite.config.mts",
    "vite.config.cts",
    "vite.config.js",
    "vite.config.mjs",
    "vite.config.cjs",
    "vitest.workspace.ts",
    "vitest.workspace.mts",
    "vitest.workspace.cts",
    "vitest.workspace.js",
    "vitest.workspace.mjs",
    "vitest.workspace.cjs",
    "vitest.workspace.json",
    "vitest.projects.ts",
    "vitest.projects.mts",
    "vitest.projects.cts",
    "vitest.projects.js",
    "vitest.projects.mjs",
    "vitest.projects.cjs",
    "vitest.projects.json",
];

/// The words of `command`, split at white space and shell separators, quotes dropped.
fn words(command: &str) -> Vec<String> {
    command
        .split(|c: char| c.is_whitespace() || ";&|()`".contains(c))
        .map(|w| w.replace(['\'', '"'], ""))
        .filter(|w| !w.is_empty())
        .collect()
}

/// True when one of the command's words is the program `vitest` (a path to it too).
pub fn runs_vitest(command: &str) -> bool {
    words(command)
        .iter()
        .any(|w| w.rsplit('/').next() == Some("vitest"))
}

/// Whether `path` is named as one of vitest's configuration files ([`CONFIG_FILES`]).
pub fn is_config(path: &str) -> bool {
    CONFIG_FILES.contains(&path.rsplit('/').next().unwrap_or(path))
}

/// A path of the repository as a command names it: relative, inside, `./` dropped.
fn inside(path: &str) -> Option<String> {
    let path = path.trim_start_matches("./").trim_end_matches('/');
    let ok = !path.is_empty()
        && !path.starts_with(['/', '~'])
        && !path.contains('$')
        && path.split('/').all(|p| !matches!(p, "" | "." | ".."));
    ok.then(|| path.to_string())
}

/// The configuration files of the repository a command that runs vitest may load: each of
/// [`CONFIG_FILES`] in the directory it runs in (the repository's root, one a `cd` names, the
/// one `--root`/`-r` names) and in every directory above it up to the root, as vitest looks
/// upward for its configuration, whether the tree has it or not, and the file
/// `--config`/`-c` names; nothing for a command that does not run vitest. What a value is
/// built from (a variable) is not guessed at.
pub fn named_by_command(command: &str) -> Vec<String> {
    named_and_roots(command).0
}

/// The directories a vitest command runs from, the repository's root first: where its
/// configuration is looked for upward from, and what it resolves the paths in it from.
pub fn roots(command: &str) -> Vec<String> {
    named_and_roots(command).1
}

/// [`named_by_command`] and [`roots`].
fn named_and_roots(command: &str) -> (Vec<String>, Vec<String>) {
    if !runs_vitest(command) {
        return (Vec::new(), Vec::new());
    }
    let words = words(command);
    let mut roots = vec![String::new()];
    let mut configs = Vec::new();
    let mut out = Vec::new();
    let mut i = 0;
    while i < words.len() {
        let word = words[i].as_str();
        i += 1;
        let (is_config, value) = match word.split_once('=') {
            Some(("--config" | "-c", v)) => (true, Some(v.to_string())),
            Some(("--root" | "-r", v)) => (false, Some(v.to_string())),
            _ if matches!(word, "--config" | "-c" | "--root" | "-r" | "cd") => {
                (matches!(word, "--config" | "-c"), words.get(i).cloned())
            }
            _ => continue,
        };
        let Some(path) = value.as_deref().and_then(inside) else {
            continue;
        };
        if is_config {
            configs.push(path);
        } else {
            let mut dir = std::path::Path::new(&path);
            loop {
                roots.push(dir.to_string_lossy().into_owned());
                match dir.parent() {
                    Some(up) if !up.as_os_str().is_empty() => dir = up,
                    _ => break,
                }
            }
        }
    }
    let join = |dir: &str, name: &str| match dir {
        "" => name.to_string(),
        dir => format!("{dir}/{name}"),
    };
    for root in &roots {
        for name in CONFIG_FILES {
            out.push(join(root, name));
        }
        // A `--config` is resolved from the root vitest runs in.
        for config in &configs {
            if let Some(path) = super::repo_path::within("", &join(root, config)) {
                out.push(path);
            }
        }
    }
    out.sort();
    out.dedup();
    roots.sort();
    roots.dedup();
    (out, roots)
}

/// The options of a vitest configuration whose values are modules vitest runs before the
/// tests: one that mocks the module under test (`vi.mock`) makes the pinned test pass with
/// the task's code never run.
const SETUP_KEYS: &[&str] = &["setupFiles", "globalSetup"];

/// The extensions vite resolves a module path with, after the path as written.
const EXTENSIONS: &[&str] = &[
    "", ".ts", ".mts", ".cts", ".js", ".mjs", ".cjs", ".tsx", ".jsx",
];

/// The files of the repository the vitest configuration `path` (its text `text`) names as
/// setup modules ([`SETUP_KEYS`]): each string written as such a key's value, or in a list
/// that is its value, resolved from each directory of `roots` (vitest resolves them from
/// its root: where it runs, a `--root`, or the configuration's own `root`, which only
/// running it tells) and from the configuration's own directory, with each extension vite
/// tries and a directory's `index`. What a value is built from otherwise (a variable, a
/// call) only running the configuration tells, and is not read.
pub fn setup_files(path: &str, text: &str, roots: &[String]) -> Vec<String> {
    let own = path.rsplit_once('/').map_or("", |(d, _)| d).to_string();
    let mut bases: Vec<&str> = roots.iter().map(String::as_str).collect();
    bases.push(&own);
    bases.sort_unstable();
    bases.dedup();
    let mut out = Vec::new();
    for key in SETUP_KEYS {
        let mut rest = text;
        while let Some(at) = rest.find(key) {
            rest = &rest[at + key.len()..];
            let after =
                rest.trim_start_matches(|c: char| c == '"' || c == '\'' || c.is_whitespace());
            let Some(value) = after.strip_prefix(':') else {
                continue;
            };
            let value = value.trim_start();
            let strings = match value.strip_prefix('[') {
                Some(list) => list.split(']').next().unwrap_or(""),
                None => value,
            };
            for name in string_literals(strings, value.starts_with('[')) {
                if name.starts_with('/') || name.contains('$') {
                    continue;
                }
                for dir in &bases {
                    let joined = match *dir {
                        "" => name.clone(),
                        dir => format!("{dir}/{name}"),
                    };
                    let Some(module) =
                        super::repo_path::within("", &joined).filter(|p| !p.is_empty())
                    else {
                        continue;
                    };
                    out.extend(EXTENSIONS.iter().map(|e| format!("{module}{e}")));
                    out.extend(EXTENSIONS[1..].iter().map(|e| format!("{module}/index{e}")));
                }
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

/// The quoted strings at the start of `text` (`all`: every one in it, a list's items).
fn string_literals(text: &str, all: bool) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if matches!(c, '\'' | '"' | '`') {
            let mut s = String::new();
            for q in chars.by_ref() {
                if q == c {
                    break;
                }
                s.push(q);
            }
            out.push(s);
            if !all {
                break;
            }
        } else if !all && !c.is_whitespace() {
            break;
        }
    }
    out
}

/// `hooks` without the `vite.config.*` of a directory where `present` says a
/// `vitest.config.*` is that does not name vite's (`imports_vite`: its text mentions
/// `vite.config`, as `mergeConfig(viteConfig, …)` needs): vitest reads vite's own
/// configuration only where it finds none of its own, and vite's is the application's build,
/// which a GREEN step may change.
pub fn read_by_vitest(
    hooks: Vec<String>,
    present: impl Fn(&str) -> bool,
    imports_vite: impl Fn(&str) -> bool,
) -> Vec<String> {
    let dir_of = |p: &str| {
        p.rsplit_once('/')
            .map_or(String::new(), |(d, _)| d.to_string())
    };
    let own: Vec<String> = hooks
        .iter()
        .filter(|p| {
            p.rsplit('/')
                .next()
                .is_some_and(|n| n.starts_with("vitest.config."))
                && present(p)
                && !imports_vite(p)
        })
        .map(|p| dir_of(p))
        .collect();
    hooks
        .into_iter()
        .filter(|p| {
            let vite = p
                .rsplit('/')
                .next()
                .is_some_and(|n| n.starts_with("vite.config."));
            !(vite && own.contains(&dir_of(p)))
        })
        .collect()
}

/// The configuration files a vitest command line names with `--config`.
pub fn configs_named_by_command(command: &str) -> Vec<String> {
    named_by_command(command)
        .into_iter()
        .filter(|p| !is_config(p))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn all_in(dir: &str) -> Vec<String> {
        CONFIG_FILES
            .iter()
            .map(|n| match dir {
                "" => n.to_string(),
                d => format!("{d}/{n}"),
            })
            .collect()
    }

    #[test]
    fn a_vitest_command_names_every_configuration_file_of_its_root() {
        let mut root = all_in("");
        root.sort();
        assert_eq!(named_by_command("npx vitest run"), root);
        assert_eq!(
            named_by_command("./node_modules/.bin/vitest --run tests"),
            root
        );
        let mut with = root.clone();
        with.push("ci/vt.config.mjs".to_string());
        with.sort();
        assert_eq!(
            named_by_command("vitest run --config ci/vt.config.mjs"),
            with
        );
        assert_eq!(named_by_command("vitest run -c=./ci/vt.config.mjs"), with);
        assert_eq!(
            configs_named_by_command("vitest run -c ci/vt.config.mjs"),
            vec!["ci/vt.config.mjs".to_string()]
        );
        let mut rooted = root.clone();
        rooted.extend(all_in("web"));
        rooted.sort();
        assert_eq!(named_by_command("vitest run --root web"), rooted);
        assert_eq!(named_by_command("vitest run -r=./web/"), rooted);
        // vitest looks upward from where it runs: every directory on the way is read.
        let mut deep = root.clone();
        deep.extend(all_in("web"));
        deep.extend(all_in("web/app"));
        deep.sort();
        assert_eq!(named_by_command("cd web/app && npx vitest run"), deep);
    }

    #[test]
    fn the_setup_modules_a_configuration_names_are_read_from_its_strings() {
        let with_ext = |m: &str| -> Vec<String> {
            let mut v: Vec<String> = EXTENSIONS.iter().map(|e| format!("{m}{e}")).collect();
            v.extend(EXTENSIONS[1..].iter().map(|e| format!("{m}/index{e}")));
            v
        };
        let config = "import { defineConfig } from 'vitest/config';\nexport default defineConfig({\n  \
                      test: {\n    setupFiles: ['./tests/setup.ts', 'mocks'],\n    globalSetup: \
                      \"./global.js\",\n    include: ['tests/**/*.test.ts'],\n  },\n});\n";
        let mut want = with_ext("tests/setup.ts");
        want.extend(with_ext("mocks"));
        want.extend(with_ext("global.js"));
        want.sort();
        want.dedup();
        assert_eq!(
            setup_files("vitest.config.ts", config, &[String::new()]),
            want
        );
        // From the configuration's own directory; a value built otherwise names nothing.
        let mut web = with_ext("web/s.js");
        web.sort();
        assert_eq!(
            setup_files(
                "web/vite.config.js",
                "export default { test: { setupFiles: './s.js' } }",
                &["web".to_string()]
            ),
            web
        );
        // From each root too: `vitest --config ci/vt.mjs` resolves them from where it runs.
        let mut both = with_ext("ci/tests/setup.ts");
        both.extend(with_ext("tests/setup.ts"));
        both.sort();
        assert_eq!(
            setup_files(
                "ci/vt.mjs",
                "setupFiles: './tests/setup.ts'",
                &[String::new()]
            ),
            both
        );
        assert!(setup_files("vitest.config.ts", "test: { setupFiles: files }", &[]).is_empty());
        assert!(
            setup_files(
                "vitest.config.ts",
                "setupFiles: ['/abs.js', '../out.js']",
                &[]
            )
            .is_empty()
        );
    }

    #[test]
    fn vites_configuration_is_vitests_only_where_vitest_has_none_of_its_own() {
        let hooks = |names: &[&str]| names.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let all = hooks(&[
            "vite.config.ts",
            "vitest.config.ts",
            "web/vite.config.js",
            "web/vitest.config.mjs",
        ]);
        // The root has its own vitest.config.ts; web has none.
        let present = |p: &str| p == "vitest.config.ts" || p == "web/vite.config.js";
        assert_eq!(
            read_by_vitest(all.clone(), present, |_| false),
            hooks(&[
                "vitest.config.ts",
                "web/vite.config.js",
                "web/vitest.config.mjs"
            ])
        );
        assert_eq!(read_by_vitest(all.clone(), |_| false, |_| false), all);
        // A vitest configuration that merges vite's keeps it pinned.
        assert_eq!(read_by_vitest(all.clone(), present, |_| true), all);
    }

    #[test]
    fn paths_outside_the_repository_and_other_runners_name_nothing() {
        let mut root = all_in("");
        root.sort();
        assert_eq!(
            named_by_command("vitest run --config /tmp/x.js --root ../up"),
            root
        );
        assert_eq!(named_by_command("vitest run -c $CONFIG"), root);
        assert!(named_by_command("npx jest --config vitest.config.js").is_empty());
        assert!(named_by_command("pytest tests/test_vitest.py").is_empty());
        assert!(!runs_vitest("echo vitest-free"));
        assert!(is_config("web/vite.config.ts"));
        assert!(!is_config("src/vite.ts"));
    }
}
