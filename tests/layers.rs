//! The import graph of `src/` (docs/architecture.md, "Layers"): no file imports from a
//! higher layer, and no files import each other in a circle. A scan of the paths each file
//! names (`use` trees and inline `crate::`/`super::` paths), re-exports followed to the file
//! that defines the item; test-only code is left out, since tests may reach anywhere.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Each file's imports: the modules it names, by path from the crate root.
type Edges = BTreeMap<Vec<String>, BTreeSet<Vec<String>>>;

/// The layers, lowest first: a module may import from its own top-level module and from
/// modules of a lower layer only. The crate root (`lib.rs`: a few constants) is below all.
const LAYERS: &[&[&str]] = &[
    &["input", "glob", "environ", "crash"],
    &["workflow"],
    &["store"],
    &["config"],
    &["exec"],
    &["gates", "hooks"],
    &["agent"],
    &["engine"],
    &["demo"],
    &["cli"],
];

/// One source file as a module: its path segments (`["engine", "get_task"]`), the child
/// modules it declares, and the paths it names outside test code.
struct Module {
    file: PathBuf,
    children: BTreeSet<String>,
    /// `pub use` re-exports: the name a caller writes, and the path it stands for.
    reexports: BTreeMap<String, Vec<String>>,
    /// Paths named, made absolute (from the crate root).
    paths: Vec<Vec<String>>,
}

fn main_source() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Removes comments, string and char literals, and every item under `#[cfg(test)]`, so only
/// code that ships is scanned.
fn code_only(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < bytes.len() {
        let rest = &text[i..];
        if rest.starts_with("//") {
            i += rest.find('\n').unwrap_or(rest.len());
        } else if rest.starts_with("/*") {
            i += rest.find("*/").map_or(rest.len(), |end| end + 2);
        } else if rest.starts_with("r#\"") || rest.starts_with("r\"") {
            let hashes = rest[1..].chars().take_while(|c| *c == '#').count();
            let close = format!("\"{}", "#".repeat(hashes));
            let open = 2 + hashes;
            i += rest[open..]
                .find(&close)
                .map_or(rest.len(), |end| open + end + close.len());
            out.push_str("\"\"");
        } else if rest.starts_with('"') {
            let mut j = 1;
            while j < rest.len() {
                match rest.as_bytes()[j] {
                    b'\\' => j += 2,
                    b'"' => break,
                    _ => j += 1,
                }
            }
            i += (j + 1).min(rest.len());
            out.push_str("\"\"");
        } else if let Some(after) = rest.strip_prefix('\'') {
            // A char literal ('x', '\n', '\u{..}') is skipped; a lifetime ('a) is kept.
            let mut chars = after.chars();
            let len = match (chars.next(), chars.next()) {
                (Some('\\'), _) => after[1..].find('\'').map(|end| end + 3),
                (Some(c), Some('\'')) => Some(c.len_utf8() + 2),
                _ => None,
            };
            match len {
                Some(len) => i += len,
                None => {
                    out.push('\'');
                    i += 1;
                }
            }
        } else if rest.starts_with("#[cfg(test)]") {
            i += "#[cfg(test)]".len() + item_len(&text[i + "#[cfg(test)]".len()..]);
        } else {
            let c = rest.chars().next().unwrap_or(' ');
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

/// The length of the item at the start of `text`: up to its `;` or its balanced `{...}`.
fn item_len(text: &str) -> usize {
    let mut depth = 0usize;
    for (i, c) in text.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return i + 1;
                }
            }
            ';' if depth == 0 => return i + 1,
            _ => {}
        }
    }
    text.len()
}

/// Expands a `use` tree (`a::{b, c::{d, e as f}}`) into its paths, each with the name it
/// binds.
fn use_tree(tree: &str) -> Vec<(Vec<String>, String)> {
    let tree: String = tree.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut out = Vec::new();
    expand(&tree, &mut Vec::new(), &mut out);
    out
}

fn expand(tree: &str, prefix: &mut Vec<String>, out: &mut Vec<(Vec<String>, String)>) {
    let tree = tree.trim();
    if let Some(open) = tree.find('{') {
        let head = tree[..open].trim().trim_end_matches("::");
        let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
        let pushed: Vec<String> = head
            .split("::")
            .filter(|s| !s.is_empty())
            .map(String::from)
            .collect();
        let n = pushed.len();
        prefix.extend(pushed);
        for part in split_top(inner) {
            expand(part, prefix, out);
        }
        prefix.truncate(prefix.len() - n);
        return;
    }
    let (path, alias) = match tree.split_once(" as ") {
        Some((path, alias)) => (path.trim(), Some(alias.trim())),
        None => (tree, None),
    };
    if path.is_empty() {
        return;
    }
    let mut full = prefix.clone();
    full.extend(path.split("::").map(|s| s.trim().to_string()));
    if full.last().is_some_and(|s| s == "self") {
        full.pop();
    }
    let name = alias
        .map(String::from)
        .or_else(|| full.last().cloned())
        .unwrap_or_default();
    out.push((full, name));
}

/// Splits a brace group's contents at its top-level commas.
fn split_top(inner: &str) -> Vec<&str> {
    let (mut depth, mut start, mut parts) = (0, 0, Vec::new());
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    parts
}

/// Makes a path absolute: `crate::a` is `a`, `super::b` is the parent's `b`, `self::c` and a
/// child module's name are this module's. Anything else (std, a dependency, a local name)
/// is not ours.
fn absolute(path: &[String], here: &[String], children: &BTreeSet<String>) -> Option<Vec<String>> {
    let first = path.first()?;
    let mut base: Vec<String> = match first.as_str() {
        "crate" => Vec::new(),
        "self" => here.to_vec(),
        "super" => {
            let mut base = here.to_vec();
            let mut rest = path;
            while rest.first().is_some_and(|s| s == "super") {
                base.pop();
                rest = &rest[1..];
            }
            base.extend(rest.iter().cloned());
            return Some(base);
        }
        name if children.contains(name) => {
            let mut base = here.to_vec();
            base.push(name.to_string());
            base.extend(path[1..].iter().cloned());
            return Some(base);
        }
        _ => return None,
    };
    base.extend(path[1..].iter().cloned());
    Some(base)
}

fn load() -> BTreeMap<Vec<String>, Module> {
    let root = main_source();
    let mut files = Vec::new();
    let mut dirs = vec![root.clone()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("src is readable") {
            let path = entry.expect("src is readable").path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    let mut modules = BTreeMap::new();
    for file in files {
        let rel = file.strip_prefix(&root).expect("under src");
        let mut segments: Vec<String> = rel
            .with_extension("")
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        if matches!(
            segments.last().map(String::as_str),
            Some("mod" | "lib" | "main")
        ) {
            segments.pop();
        }
        if rel == Path::new("main.rs") {
            continue;
        }
        let text = std::fs::read_to_string(&file).expect("source is UTF-8");
        modules.insert(segments, scan(&file, &text));
    }
    // Files declared only under `#[cfg(test)]` are not in `children` of their parent: drop
    // them (and everything below them), as the compiler does outside tests.
    let declared: BTreeSet<Vec<String>> = modules
        .iter()
        .flat_map(|(here, module)| {
            module.children.iter().map(move |child| {
                let mut path = here.clone();
                path.push(child.clone());
                path
            })
        })
        .collect();
    let keep: BTreeSet<Vec<String>> = modules
        .keys()
        .filter(|path| (1..=path.len()).all(|n| declared.contains(&path[..n])))
        .cloned()
        .collect();
    modules.retain(|path, _| path.is_empty() || keep.contains(path));
    modules
}

fn scan(file: &Path, text: &str) -> Module {
    let code = code_only(text);
    let mut children = BTreeSet::new();
    let mut reexports = BTreeMap::new();
    let mut uses = Vec::new();
    let mut rest = code.as_str();
    // Statements that matter start a line: `mod x;`, `pub use ...;`, `use ...;`.
    let mut remaining = String::new();
    while !rest.is_empty() {
        let line_end = rest.find('\n').map_or(rest.len(), |n| n + 1);
        let line = rest[..line_end].trim_start();
        let vis_stripped = strip_visibility(line);
        if let Some(decl) = vis_stripped.strip_prefix("mod ") {
            if let Some(name) = decl.trim().strip_suffix(';') {
                children.insert(name.trim().to_string());
            }
            remaining.push_str(&rest[..line_end]);
            rest = &rest[line_end..];
        } else if vis_stripped.starts_with("use ") {
            let lead = line_end - line.len();
            let offset = lead + (line.len() - vis_stripped.len()) + 4;
            let end = rest[offset..].find(';').map_or(rest.len(), |n| offset + n);
            // A `pub use` only forwards a name (followed when a caller's path is resolved),
            // so it is not an import of this file's own code.
            let public = line.starts_with("pub");
            for (path, name) in use_tree(&rest[offset..end]) {
                if public {
                    reexports.insert(name, path);
                } else {
                    uses.push(path);
                }
            }
            rest = &rest[(end + 1).min(rest.len())..];
        } else {
            remaining.push_str(&rest[..line_end]);
            rest = &rest[line_end..];
        }
    }
    let mut paths = uses;
    // Inline paths: `crate::a::b`, `super::c`, `self::d`, and `child::e`.
    let chars: Vec<char> = remaining.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let starts_word = i == 0
            || !(chars[i - 1].is_alphanumeric() || chars[i - 1] == '_' || chars[i - 1] == ':');
        if starts_word && (chars[i].is_alphabetic() || chars[i] == '_') {
            let mut j = i;
            while j < chars.len()
                && (chars[j].is_alphanumeric() || chars[j] == '_' || chars[j] == ':')
            {
                j += 1;
            }
            let word: String = chars[i..j].iter().collect();
            if word.contains("::") {
                paths.push(
                    word.split("::")
                        .filter(|s| !s.is_empty())
                        .map(String::from)
                        .collect(),
                );
            }
            i = j;
        } else {
            i += 1;
        }
    }
    Module {
        file: file.to_path_buf(),
        children,
        reexports,
        paths,
    }
}

fn strip_visibility(line: &str) -> &str {
    let line = line.trim_start();
    if let Some(rest) = line.strip_prefix("pub(") {
        return rest.find(')').map_or(line, |n| rest[n + 1..].trim_start());
    }
    line.strip_prefix("pub ").map_or(line, str::trim_start)
}

/// The file that defines what `path` names: the deepest module on it, with re-exports of a
/// module followed to where the item lives.
fn resolve(modules: &BTreeMap<Vec<String>, Module>, path: &[String], depth: usize) -> Vec<String> {
    let mut here: Vec<String> = Vec::new();
    for (n, segment) in path.iter().enumerate() {
        let mut child = here.clone();
        child.push(segment.clone());
        if modules.contains_key(&child) {
            here = child;
            continue;
        }
        let module = &modules[&here];
        if depth < 8
            && let Some(target) = module.reexports.get(segment)
            && let Some(mut target) = absolute(target, &here, &module.children)
        {
            target.extend(path[n + 1..].iter().cloned());
            return resolve(modules, &target, depth + 1);
        }
        break;
    }
    here
}

fn graph() -> (Edges, BTreeMap<Vec<String>, Module>) {
    let modules = load();
    let mut edges = BTreeMap::new();
    for (here, module) in &modules {
        let mut targets = BTreeSet::new();
        for path in &module.paths {
            let Some(path) = absolute(path, here, &module.children) else {
                continue;
            };
            let target = resolve(&modules, &path, 0);
            if target != *here && !target.is_empty() {
                targets.insert(target);
            }
        }
        edges.insert(here.clone(), targets);
    }
    (edges, modules)
}

fn name(path: &[String]) -> String {
    if path.is_empty() {
        "crate".to_string()
    } else {
        path.join("::")
    }
}

fn layer(path: &[String]) -> Option<usize> {
    let top = path.first()?;
    LAYERS
        .iter()
        .position(|layer| layer.contains(&top.as_str()))
}

#[test]
fn no_module_imports_from_a_higher_layer() {
    let (edges, modules) = graph();
    let mut wrong = Vec::new();
    for (from, targets) in &edges {
        let Some(from_layer) = layer(from) else {
            assert!(
                from.is_empty(),
                "{} is in no layer: add it to LAYERS",
                name(from)
            );
            continue;
        };
        for to in targets {
            let same_top = from.first() == to.first();
            if !same_top && layer(to).is_none_or(|to_layer| to_layer >= from_layer) {
                wrong.push(format!(
                    "{} ({}) imports {}",
                    name(from),
                    modules[from].file.display(),
                    name(to)
                ));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "imports from a layer that is not lower:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn no_files_import_each_other_in_a_circle() {
    let (edges, _) = graph();
    // Each circle with the imports that close it, so the message says what to move.
    let circles: Vec<String> = strongly_connected(&edges)
        .into_iter()
        .filter(|component| component.len() > 1)
        .map(|component| {
            let arrows: Vec<String> = component
                .iter()
                .flat_map(|from| {
                    edges[from]
                        .iter()
                        .filter(|to| component.contains(to))
                        .map(move |to| format!("  {} -> {}", name(from), name(to)))
                })
                .collect();
            arrows.join("\n")
        })
        .collect();
    assert!(
        circles.is_empty(),
        "import circles:\n{}",
        circles.join("\n")
    );
}

/// Tarjan's strongly connected components.
fn strongly_connected(edges: &Edges) -> Vec<Vec<Vec<String>>> {
    struct Walk<'a> {
        edges: &'a Edges,
        index: BTreeMap<&'a Vec<String>, usize>,
        low: BTreeMap<&'a Vec<String>, usize>,
        stack: Vec<&'a Vec<String>>,
        on_stack: BTreeSet<&'a Vec<String>>,
        out: Vec<Vec<Vec<String>>>,
    }
    fn visit<'a>(walk: &mut Walk<'a>, v: &'a Vec<String>) {
        let n = walk.index.len();
        walk.index.insert(v, n);
        walk.low.insert(v, n);
        walk.stack.push(v);
        walk.on_stack.insert(v);
        for w in walk.edges.get(v).into_iter().flatten() {
            let Some((w, _)) = walk.edges.get_key_value(w) else {
                continue;
            };
            if !walk.index.contains_key(w) {
                visit(walk, w);
                let low = walk.low[v].min(walk.low[w]);
                walk.low.insert(v, low);
            } else if walk.on_stack.contains(w) {
                let low = walk.low[v].min(walk.index[w]);
                walk.low.insert(v, low);
            }
        }
        if walk.low[v] == walk.index[v] {
            let mut component = Vec::new();
            while let Some(w) = walk.stack.pop() {
                walk.on_stack.remove(w);
                component.push(w.clone());
                if w == v {
                    break;
                }
            }
            walk.out.push(component);
        }
    }
    let mut walk = Walk {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in edges.keys() {
        if !walk.index.contains_key(v) {
            visit(&mut walk, v);
        }
    }
    walk.out
}

#[test]
fn the_scan_sees_use_trees_inline_paths_and_reexports() {
    let text = "use crate::a::{b, c::{d, e as f}};\npub use self::g::H;\nmod g;\n\
                #[cfg(test)]\nmod tests { use crate::z; }\nfn x() { super::y::call(); let s = \"crate::q\"; }\n";
    let module = scan(Path::new("x.rs"), text);
    let paths: Vec<String> = module.paths.iter().map(|p| p.join("::")).collect();
    assert_eq!(
        paths,
        [
            "crate::a::b",
            "crate::a::c::d",
            "crate::a::c::e",
            "super::y::call"
        ]
    );
    assert_eq!(module.children, BTreeSet::from(["g".to_string()]));
    assert_eq!(module.reexports["H"], ["self", "g", "H"]);
}
