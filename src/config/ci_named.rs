//! The repository paths a CI file names as code the CI runs (docs/integrity.md, "Protected
//! paths"): the local actions and reusable workflows a GitHub workflow runs with
//! `uses: ./…`, and the files GitLab includes (`include:`, `include: local:`, lists of
//! them, a child pipeline's `trigger: include:`). Read line by line, not by a YAML parser:
//! the files are main's, written by people, and the scanner takes more than it must (a
//! `file:` of another project, a path under `rules: exists:`) rather than less, since a path
//! taken in vain only asks a human for one more change.

/// A path a CI file names.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Named {
    /// A file or a directory, as named (`uses: ./.github/actions/build` is the directory of
    /// an action; `include: ci/x.yml` a file).
    Path(String),
    /// Everything under a directory: where a GitLab include names files by a wildcard
    /// (`ci/*.yml`), the directory before its first wildcard; `""` is the whole repository.
    Under(String),
}

/// The local paths named by `uses:` in a GitHub workflow or action file.
pub fn github_uses(text: &str) -> Vec<Named> {
    let mut named = Vec::new();
    for line in text.lines() {
        let line = uncommented(line);
        let mut rest = line;
        while let Some(at) = rest.find("uses:") {
            let before = rest[..at].chars().next_back();
            let value = &rest[at + "uses:".len()..];
            rest = value;
            if !matches!(
                before,
                None | Some(' ' | '\t' | '-' | '{' | ',' | '"' | '\'')
            ) {
                continue;
            }
            let value = scalar(value);
            if let Some(local) = value.strip_prefix("./")
                && let Some(path) = normalized(local)
            {
                if path.is_empty() {
                    // `uses: ./` is the action at the repository's root: its metadata file.
                    named.extend(["action.yml", "action.yaml"].map(|f| Named::Path(f.into())));
                } else {
                    named.push(Named::Path(path));
                }
            }
        }
    }
    named.sort();
    named.dedup();
    named
}

/// The local files a GitLab CI file includes: a string or a list of strings under
/// `include:`, and every `local:` and `file:` value (with the lists under them) in an
/// `include:` block, at any depth (`trigger: include:` too). Remote includes (`http://`,
/// `https://`) are left out; a value that holds a variable (`$…`, which only GitLab
/// expands) names, as a wildcard does, everything under the directory before it.
pub fn gitlab_includes(text: &str) -> Vec<Named> {
    let mut named = Vec::new();
    // The indentation of the `include:` key whose block the lines are in.
    let mut block: Option<usize> = None;
    for line in text.lines() {
        let line = uncommented(line);
        if line.trim().is_empty() {
            continue;
        }
        let indent = line.len() - line.trim_start().len();
        let body = line.trim_start();
        if let Some(start) = block {
            // A list may start at the key's own indentation (`include:` then `- a.yml`).
            let inside = indent > start || (indent == start && body.starts_with('-'));
            if !inside {
                block = None;
            }
        }
        let item = body.strip_prefix('-').map(str::trim_start);
        let entry = item.unwrap_or(body);
        match key_value(entry) {
            Some(("include", value)) => {
                if value.is_empty() {
                    block = Some(indent);
                } else {
                    named.extend(values(value).into_iter().filter_map(included));
                }
            }
            Some(("local" | "file", value)) if block.is_some() => {
                named.extend(values(value).into_iter().filter_map(included));
            }
            Some(_) => {}
            // A bare list item in the block: a file included by its path, or one of a
            // `file:` list's.
            None if block.is_some() && item.is_some() => {
                named.extend(values(entry).into_iter().filter_map(included));
            }
            None => {}
        }
    }
    named.sort();
    named.dedup();
    named
}

/// `line` without a comment: a `#` at its start or after a blank.
fn uncommented(line: &str) -> &str {
    let mut previous = ' ';
    for (at, c) in line.char_indices() {
        if c == '#' && previous.is_whitespace() {
            return &line[..at];
        }
        previous = c;
    }
    line
}

/// `key: value` (the value trimmed, maybe empty) when `entry` is a mapping entry with a
/// plain key.
fn key_value(entry: &str) -> Option<(&str, &str)> {
    let (key, value) = entry.split_once(':')?;
    let key = key.trim().trim_matches(|c| c == '"' || c == '\'');
    if key.is_empty()
        || !key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        return None;
    }
    // `a:b` with no blank after the colon is a plain scalar, not a key.
    if !(value.is_empty() || value.starts_with([' ', '\t'])) {
        return None;
    }
    Some((key, value.trim()))
}

/// The scalars of a value: a flow list's items (`[a.yml, 'b.yml']`), a flow mapping's
/// `local:`/`file:` values (`{ local: a.yml }`), or the one scalar.
fn values(value: &str) -> Vec<String> {
    let value = value.trim();
    if let Some(inner) = value
        .strip_prefix('[')
        .map(|v| v.strip_suffix(']').unwrap_or(v))
    {
        return inner
            .split(',')
            .flat_map(|part| values(part.trim()))
            .collect();
    }
    if let Some(inner) = value
        .strip_prefix('{')
        .map(|v| v.strip_suffix('}').unwrap_or(v))
    {
        return inner
            .split(',')
            .filter_map(|part| match key_value(part.trim()) {
                Some(("local" | "file", v)) => Some(scalar(v)),
                _ => None,
            })
            .collect();
    }
    vec![scalar(value)]
}

/// The first scalar of `value`: quoted, or up to a blank, `,`, `]` or `}`.
fn scalar(value: &str) -> String {
    let value = value.trim_start();
    for quote in ['"', '\''] {
        if let Some(inner) = value.strip_prefix(quote) {
            return inner.split(quote).next().unwrap_or_default().to_string();
        }
    }
    value
        .split([' ', '\t', ',', ']', '}'])
        .next()
        .unwrap_or_default()
        .to_string()
}

/// A GitLab include value as a path of this repository, if it is one.
fn included(value: String) -> Option<Named> {
    if value.is_empty() || value.contains("://") {
        return None;
    }
    let path = value.trim_start_matches('/');
    match path.find(['*', '?', '[', '$']) {
        Some(at) => {
            let dir = path[..at]
                .rsplit_once('/')
                .map(|(dir, _)| dir)
                .unwrap_or("");
            normalized(dir).map(Named::Under)
        }
        None => normalized(path).filter(|p| !p.is_empty()).map(Named::Path),
    }
}

/// `path` relative to the repository's root with no `.` or empty parts; `None` when it
/// leaves the repository or starts like an option.
fn normalized(path: &str) -> Option<String> {
    let path = crate::workflow::repo_path::within("", path)?;
    (!path.starts_with('-') && !path.contains(|c: char| c.is_control())).then_some(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn paths(v: &[&str]) -> Vec<Named> {
        v.iter().map(|p| Named::Path(p.to_string())).collect()
    }

    #[test]
    fn a_workflow_names_its_local_actions_and_reusable_workflows() {
        // A `uses:` in a command line is taken too: more than it must, never less.
        let text = "\
jobs:
  call:
    uses: ./.github/workflows/reusable.yml # a reusable workflow
  build:
    steps:
      - uses: actions/checkout@v4
      - uses: ./.github/actions/setup
      - name: quoted
        uses: \"./tools/act/\"
      - {uses: './ci/../tools/other', with: {a: 1}}
      # - uses: ./commented/out
      - run: echo uses: ./in-a-run-line
      - uses: ./../outside
      - uses: ./
";
        assert_eq!(
            github_uses(text),
            paths(&[
                ".github/actions/setup",
                ".github/workflows/reusable.yml",
                "action.yaml",
                "action.yml",
                "in-a-run-line",
                "tools/act",
                "tools/other",
            ])
        );
    }

    #[test]
    fn a_gitlab_file_names_what_it_includes_in_every_form() {
        let cases: [(&str, &str, Vec<Named>); 8] = [
            ("a string", "include: 'ci/a.yml'\n", paths(&["ci/a.yml"])),
            (
                "a flow list, one remote",
                "include: [ci/a.yml, \"/ci/b.yml\", 'https://x.example/c.yml']\n",
                paths(&["ci/a.yml", "ci/b.yml"]),
            ),
            (
                "local: in a block",
                "include:\n  local: ci/a.yml\nstages: [test]\n",
                paths(&["ci/a.yml"]),
            ),
            (
                "a list of strings and mappings",
                "include:\n- ci/a.yml\n- local: /ci/b.yml\n  rules:\n    - if: $X\n- remote: https://x/y.yml\n- project: g/p\n  file:\n    - /shared/c.yml\n- template: Auto.yml\ntest:\n  script:\n    - ./run.sh\n",
                paths(&["ci/a.yml", "ci/b.yml", "shared/c.yml"]),
            ),
            (
                "a flow mapping",
                "include: { local: ci/a.yml }\n",
                paths(&["ci/a.yml"]),
            ),
            (
                "a child pipeline",
                "child:\n  trigger:\n    include:\n      - local: ci/child.yml\n  script: [x]\n",
                paths(&["ci/child.yml"]),
            ),
            (
                "wildcards",
                "include:\n  - local: 'ci/jobs/*.yml'\n  - '**.yml'\n",
                vec![Named::Under(String::new()), Named::Under("ci/jobs".into())],
            ),
            (
                "variables and a path outside",
                "include:\n  - local: ci/$ENV/a.yml\n  - local: $DIR/a.yml\n  - ../a.yml\n",
                vec![Named::Under(String::new()), Named::Under("ci".into())],
            ),
        ];
        for (case, text, expected) in cases {
            assert_eq!(gitlab_includes(text), expected, "{case}");
        }
    }

    #[test]
    fn keys_outside_an_include_block_name_nothing() {
        let text = "variables:\n  local: ci/a.yml\njob:\n  script:\n    - cat ci/b.yml\n";
        assert_eq!(gitlab_includes(text), vec![]);
    }
}
