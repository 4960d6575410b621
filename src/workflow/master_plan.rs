//! The master plan as `--no-pr-left` reads it (docs/integrity.md, "Claims are checked"): its
//! PR headings, and which of them are not marked `[DONE]`.

/// The PR headings of a master plan that are not marked `[DONE]`, as written. A PR heading
/// is a Markdown heading (`#` to `######`) whose text starts with `PR` or `Pull Request`
/// followed by anything but a letter: `## PR 2: feat: Multiply`, `### PR-3`, `# PR #4 …`.
pub fn open_prs(text: &str) -> Vec<String> {
    let mut fenced = false;
    let mut open = Vec::new();
    for line in text.lines() {
        let trimmed = line.trim_start();
        // Code fences hold examples, not the plan.
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        let Some(heading) = heading_text(line) else {
            continue;
        };
        if is_pr_heading(heading) && !heading.to_ascii_lowercase().contains("[done]") {
            open.push(heading.to_string());
        }
    }
    open
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
    Some(text.trim().trim_end_matches('#').trim())
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
