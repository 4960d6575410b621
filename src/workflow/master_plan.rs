//! The master plan as `--no-pr-left` reads it (docs/integrity.md, "Claims are checked"): its
//! PR headings, and which of them are not marked `[DONE]`.

/// The master plan `init --plan-template` writes where none is: two PR headings to replace,
/// and the rules an agent plans by, said once where the user edits them.
pub const TEMPLATE: &str = "\
# Master plan

<!--
One `## PR N: <title>` heading per pull request, in the order they should land. Under each,
a few lines on what the PR does and how to tell it works: the agent plans the first PR not
marked [DONE] from them, writes the tests first, and marks it [DONE] before its merge.
Replace the two examples below, then commit this file on the main branch.
-->

## PR 1: feat: <the first thing to build>

What it does, for whom, and the behaviour a test can check (inputs and the outputs expected).

## PR 2: feat: <the next thing>

What it adds on top of PR 1.
";

/// The PR headings of a master plan that are not marked `[DONE]`, as written. A PR heading
/// is a Markdown heading (`#` to `######`) whose text starts with `PR` or `Pull Request`
/// followed by anything but a letter: `## PR 2: feat: Multiply`, `### PR-3`, `# PR #4 …`.
pub fn open_prs(text: &str) -> Vec<String> {
    pr_headings(text)
        .into_iter()
        .filter_map(|(heading, done)| (!done).then_some(heading))
        .collect()
}

/// Every PR heading of a master plan as written, and whether it is marked `[DONE]`.
pub fn pr_headings(text: &str) -> Vec<(String, bool)> {
    let mut fenced = false;
    let mut out = Vec::new();
    for line in text.lines() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        if let Some(heading) = heading_text(line).filter(|h| is_pr_heading(h)) {
            let done = heading.to_ascii_lowercase().contains("[done]");
            out.push((heading.to_string(), done));
        }
    }
    out
}

/// The PR's title in a PR heading: what follows `PR <number>` and its separator
/// (`PR 2: feat: Multiply` → `feat: Multiply`), for comparing with a plan's `prTitle`.
pub fn heading_title(heading: &str) -> &str {
    let lower = heading.to_ascii_lowercase();
    let skip = if lower.starts_with("pull request") {
        "pull request".len()
    } else if lower.starts_with("pr") {
        2
    } else {
        0
    };
    heading[skip..]
        .trim_start_matches(|c: char| c.is_whitespace() || matches!(c, '#' | '-' | '.' | ':'))
        .trim_start_matches(|c: char| c.is_ascii_digit())
        .trim_start_matches(|c: char| c.is_whitespace() || matches!(c, '-' | '.' | ':' | ')'))
        .trim()
}

/// True when an open PR heading names the PR titled `title` (the active plan of some
/// workflow): the heading's title is exactly it, letter case aside.
pub fn names_pr(heading: &str, title: &str) -> bool {
    let title = title.trim();
    !title.is_empty() && heading_title(heading).eq_ignore_ascii_case(title)
}

/// `text` with the open PR heading that names `title` marked `[DONE] <commit>`, the rest as
/// it was; `None` when no open heading names it.
pub fn mark_done(text: &str, title: &str, commit: &str) -> Option<String> {
    let mut fenced = false;
    let mut out = String::with_capacity(text.len() + 32);
    let mut marked = false;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim_start();
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            fenced = !fenced;
        }
        let heading = (!fenced && !marked)
            .then(|| heading_text(line.trim_end_matches(['\n', '\r'])))
            .flatten()
            .filter(|h| is_pr_heading(h) && !h.to_ascii_lowercase().contains("[done]"))
            .filter(|h| names_pr(h, title));
        match heading {
            Some(_) => {
                let body = line.trim_end_matches(['\n', '\r']);
                let ending = &line[body.len()..];
                // A closing sequence of `#` stays last.
                let open = without_closing(body.trim_end());
                let closing = &body.trim_end()[open.len()..];
                out.push_str(open);
                out.push_str(&format!(" [DONE] {commit}"));
                if !closing.trim().is_empty() {
                    out.push(' ');
                    out.push_str(closing.trim());
                }
                out.push_str(ending);
                marked = true;
            }
            None => out.push_str(line),
        }
    }
    marked.then_some(out)
}

/// The text of an ATX heading (up to three spaces of indent, 1 to 6 `#`, then a space).
fn heading_text(line: &str) -> Option<&str> {
    let indent = line.len() - line.trim_start_matches(' ').len();
    if indent > 3 {
        return None;
    }
    let rest = &line[indent..];
    let hashes = rest.len() - rest.trim_start_matches('#').len();
    if !(1..=6).contains(&hashes) {
        return None;
    }
    let text = &rest[hashes..];
    if !(text.is_empty() || text.starts_with(' ') || text.starts_with('\t')) {
        return None;
    }
    // A closing sequence of `#` is not part of the heading.
    Some(without_closing(text.trim()).trim())
}

/// `text` without an ATX heading's closing sequence: `#`s at the end that are preceded by a
/// space or a tab (or are all there is), as CommonMark reads them. `Support C#` keeps its `#`.
fn without_closing(text: &str) -> &str {
    let text = text.trim_end();
    let open = text.trim_end_matches('#');
    if open.len() == text.len() {
        text
    } else if open.is_empty() || open.ends_with([' ', '\t']) {
        open.trim_end()
    } else {
        text
    }
}

fn is_pr_heading(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    let rest = lower
        .strip_prefix("pull request")
        .or_else(|| lower.strip_prefix("pr"));
    rest.is_some_and(|rest| !rest.starts_with(|c: char| c.is_alphabetic()))
}

#[cfg(test)]
mod tests {
    use super::*;

    use pretty_assertions::assert_eq;
    use proptest::prelude::*;

    #[test]
    fn the_template_names_two_open_prs_and_nothing_done() {
        assert_eq!(
            open_prs(TEMPLATE),
            vec![
                "PR 1: feat: <the first thing to build>".to_string(),
                "PR 2: feat: <the next thing>".to_string()
            ]
        );
    }

    #[test]
    fn pr_headings_not_marked_done_are_open() {
        let plan = "# Plan\n\
                    Intro mentioning PR 9 in prose.\n\
                    ## PR 1: feat: Add numbers [DONE] (abc1234)\n\
                    ## PR 2: feat: Multiply numbers\n\
                    ### PR-3 Divide ###\n\
                    #### Pull Request 4: docs\n\
                    ## PRODUCT notes\n\
                    ## pr #5: lower case\n\
                    ##PR 6 without a space is no heading\n\
                    \x20   ## PR 7 indented as code\n\
                    ```\n## PR 8 inside a fence\n```\n\
                    ## PR 10 [done]\n";
        assert_eq!(
            open_prs(plan),
            vec![
                "PR 2: feat: Multiply numbers",
                "PR-3 Divide",
                "Pull Request 4: docs",
                "pr #5: lower case"
            ]
        );
        assert!(open_prs("# Plan\n## PR 1: x [DONE]\n").is_empty());
        assert!(open_prs("").is_empty());
    }

    #[test]
    fn marking_done_touches_only_the_prs_heading() {
        let plan = "# Plan\r\n## PR 1: feat: Add [DONE] abc\r\n```\n## PR 2: feat: Multiply\n```\n## PR 2: feat: Multiply ##\n## PR 3: feat: Multiply more\n";
        assert_eq!(
            mark_done(plan, "feat: multiply", "0123456789ab").as_deref(),
            Some(
                "# Plan\r\n## PR 1: feat: Add [DONE] abc\r\n```\n## PR 2: feat: Multiply\n```\n## PR 2: feat: Multiply [DONE] 0123456789ab ##\n## PR 3: feat: Multiply more\n"
            )
        );
        assert_eq!(mark_done(plan, "feat: Add", "x"), None, "already done");
        assert_eq!(mark_done(plan, "feat: Divide", "x"), None);
    }

    /// A title ending in `#` keeps it: only `#`s after a space close a heading.
    #[test]
    fn a_title_ending_in_a_hash_is_marked_done_whole() {
        let plan = "## PR 4: feat: Support C#\n## PR 5: feat: F# too ##\n";
        assert_eq!(
            open_prs(plan),
            vec!["PR 4: feat: Support C#", "PR 5: feat: F# too"]
        );
        assert_eq!(
            mark_done(plan, "feat: Support C#", "abc").as_deref(),
            Some("## PR 4: feat: Support C# [DONE] abc\n## PR 5: feat: F# too ##\n")
        );
        assert_eq!(
            mark_done(plan, "feat: F# too", "abc").as_deref(),
            Some("## PR 4: feat: Support C#\n## PR 5: feat: F# too [DONE] abc ##\n")
        );
    }

    #[test]
    fn a_heading_names_a_pr_only_by_its_whole_title() {
        assert_eq!(heading_title("PR 2: feat: Multiply"), "feat: Multiply");
        assert_eq!(heading_title("PR-3 Divide"), "Divide");
        assert_eq!(heading_title("Pull Request 4: docs"), "docs");
        assert_eq!(heading_title("pr #5: lower case"), "lower case");
        assert!(names_pr("PR 2: feat: Multiply", "feat: multiply"));
        assert!(!names_pr("PR 2: feat: Multiply", "PR"));
        assert!(!names_pr("PR 2: feat: Multiply", "feat"));
        assert!(!names_pr("PR 2: feat: Multiply", ""));
        assert!(!names_pr(
            "PR 2: feat: Multiply and divide",
            "feat: Multiply"
        ));
    }

    proptest! {
        /// Any text is read without a panic, and every open PR is one of its lines' headings.
        #[test]
        fn any_master_plan_is_read(text in "(#{0,7}[ \\t]?(PR|pr|Pull Request|x)?[ -#:0-9a-zA-Z\\[\\]]{0,20}\\n){0,12}") {
            for open in open_prs(&text) {
                prop_assert!(text.contains(&open));
            }
        }
    }
}
