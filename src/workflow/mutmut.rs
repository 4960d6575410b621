//! mutmut (2.x) as the adequacy check's mutant maker for Python (docs/integrity.md,
//! "Adequacy by mutation"): the patch that restricts it to the lines a task changed, and its
//! JUnit report read back into mutants the engine runs. Pure: the engine runs mutmut.

use super::evidence::junit::{attr, find_tag, tag, unescape};

/// A unified diff that adds exactly `lines` (1-based) of each file's `text`: what mutmut's
/// `--use-patch-file` reads as the lines to mutate (it keeps the added lines of each file,
/// by their number in the new file). One hunk per line, so the lines are the same ones the
/// built-in mutator takes ([`super::mutate::changed_lines`]).
pub fn patch(files: &[(&str, &str, &[usize])]) -> String {
    let mut out = String::new();
    for (path, text, lines) in files {
        let all: Vec<&str> = text.lines().collect();
        let mut wanted: Vec<usize> = lines.iter().copied().filter(|n| *n >= 1).collect();
        wanted.sort_unstable();
        wanted.dedup();
        if wanted.is_empty() {
            continue;
        }
        out.push_str(&format!("--- a/{path}\n+++ b/{path}\n"));
        for n in wanted {
            let Some(line) = all.get(n - 1) else { continue };
            out.push_str(&format!("@@ -0,0 +{n},1 @@\n+{line}\n"));
        }
    }
    out
}

/// One mutant mutmut made, from its report: the file, the line (1-based), and the change
/// as a unified diff of the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reported {
    pub path: String,
    pub line: usize,
    pub diff: String,
}

/// The mutants of `mutmut junitxml --untested-policy skipped` run after `mutmut run` with a
/// runner that passes (`true`): each one survived it, so each carries its diff. A mutant
/// reported otherwise (untested, or killed by a runner that cannot kill) is left out.
/// `Err`: the text is not such a report.
pub fn report(xml: &str) -> Result<Vec<Reported>, String> {
    if find_tag(xml, "testsuite").is_none() {
        return Err("mutmut's report holds no <testsuite>".into());
    }
    let mut out = Vec::new();
    let mut rest = xml;
    while let Some(at) = find_tag(rest, "testcase") {
        rest = &rest[at..];
        let (attrs, self_closing, after) =
            tag(rest).ok_or("a <testcase> of mutmut's report is not closed")?;
        let body = if self_closing {
            ""
        } else {
            let end = rest[after..]
                .find("</testcase>")
                .ok_or("a <testcase> of mutmut's report is not closed")?;
            &rest[after..after + end]
        };
        rest = &rest[after..];
        let Some(failure) = find_tag(body, "failure") else {
            continue;
        };
        let (_, closed, start) = tag(&body[failure..]).ok_or("a <failure> is not closed")?;
        if closed {
            continue;
        }
        let text = &body[failure + start..];
        let end = text.find("</failure>").ok_or("a <failure> is not closed")?;
        let path = attr(attrs, "file").unwrap_or_default();
        let line = attr(attrs, "line")
            .and_then(|l| l.parse().ok())
            .unwrap_or(0);
        out.push(Reported {
            path,
            line,
            diff: unescape(&text[..end]),
        });
    }
    Ok(out)
}

impl Reported {
    /// `original` with this mutant's change made; `None` when its diff does not fit it.
    pub fn apply(&self, original: &str) -> Option<String> {
        apply_diff(original, &self.diff)
    }

    /// How the final note names it, as the built-in mutator's are: `money.py:7 `True` →
    /// `False``, the part of the line that changed (`line removed` when none is left).
    pub fn name(&self) -> String {
        let removed = self
            .diff
            .lines()
            .find(|l| l.starts_with('-') && !l.starts_with("---"));
        let added = self
            .diff
            .lines()
            .find(|l| l.starts_with('+') && !l.starts_with("+++"));
        super::mutate::change_name(
            &self.path,
            self.line,
            removed.map(|l| &l[1..]),
            added.map(|l| &l[1..]),
        )
    }
}

/// `original` with the change of `diff`, a unified diff of it as Python's `difflib` writes
/// one (lines before the first hunk, such as headers, ignored), made; `None` when the diff
/// does not fit it. mutmut's reports and cosmic-ray's session results hold such diffs.
pub fn apply_diff(original: &str, diff: &str) -> Option<String> {
    let lines: Vec<&str> = original.split_inclusive('\n').collect();
    let mut out: Vec<String> = Vec::new();
    // Lines of `original` taken so far.
    let mut taken = 0;
    let mut hunks = diff.lines().skip_while(|l| !l.starts_with("@@"));
    let mut header = hunks.next()?;
    loop {
        let start = hunk_start(header)?;
        // Lines before the hunk, as they are.
        if start < taken + 1 {
            return None;
        }
        while taken + 1 < start {
            out.push((*lines.get(taken)?).to_string());
            taken += 1;
        }
        let mut next = None;
        for line in hunks.by_ref() {
            if line.starts_with("@@") {
                next = Some(line);
                break;
            }
            let (kind, body) = line.split_at(line.len().min(1));
            match kind {
                // The file is diffed split at newlines: a file that ends in one has an
                // empty last "line", which may come as context past the end.
                " " | "" if body.is_empty() && taken == lines.len() => {}
                " " | "" | "-" => {
                    let have = lines.get(taken)?;
                    if have.trim_end_matches(['\n', '\r']) != body {
                        return None;
                    }
                    if kind != "-" {
                        out.push((*have).to_string());
                    }
                    taken += 1;
                }
                "+" => {
                    let ending = lines
                        .get(taken)
                        .or(lines.last())
                        .map_or("\n", |l| &l[l.trim_end_matches(['\n', '\r']).len()..]);
                    out.push(format!(
                        "{body}{}",
                        if ending.is_empty() { "\n" } else { ending }
                    ));
                }
                _ => return None,
            }
        }
        match next {
            Some(h) => header = h,
            None => break,
        }
    }
    out.extend(lines[taken..].iter().map(|l| (*l).to_string()));
    Some(out.concat())
}

/// The first line of the old side of a hunk header `@@ -a,b +c,d @@` (1-based; 0 for an
/// empty old side at the start).
fn hunk_start(header: &str) -> Option<usize> {
    let old = header.strip_prefix("@@ -")?.split([',', ' ']).next()?;
    let n: usize = old.parse().ok()?;
    Some(n.max(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MONEY: &str = "class Money:\n    def __eq__(self, other):\n        return True\n\n    def add(self, other):\n        return Money(self.cents + other.cents)\n";

    const REPORT: &str = r#"<?xml version="1.0" ?>
<testsuites disabled="0" errors="0" failures="1" tests="2" time="0.0">
	<testsuite disabled="0" errors="0" failures="1" name="mutmut" skipped="0" tests="2" time="0">
		<testcase name="Mutant #1" file="money.py" line="6">
			<failure type="failure" message="bad_survived">--- money.py
+++ money.py
@@ -3,4 +3,4 @@
         return True
 
     def add(self, other):
-        return Money(self.cents + other.cents)
+        return Money(self.cents - other.cents)
</failure>
			<system-out>        return Money(self.cents + other.cents)</system-out>
		</testcase>
		<testcase name="Mutant #2" file="money.py" line="3">
			<skipped type="skipped" message="untested">x</skipped>
			<system-out>        return True</system-out>
		</testcase>
	</testsuite>
</testsuites>
"#;

    #[test]
    fn the_patch_adds_exactly_the_changed_lines() {
        assert_eq!(
            patch(&[("money.py", MONEY, &[6, 3, 3][..])]),
            "--- a/money.py\n+++ b/money.py\n@@ -0,0 +3,1 @@\n+        return True\n\
             @@ -0,0 +6,1 @@\n+        return Money(self.cents + other.cents)\n"
        );
        assert_eq!(patch(&[("money.py", MONEY, &[][..])]), "");
    }

    #[test]
    fn the_report_gives_each_survivor_with_its_diff_and_leaves_the_untested_out() {
        let found = report(REPORT).unwrap();
        assert_eq!(found.len(), 1);
        assert_eq!((found[0].path.as_str(), found[0].line), ("money.py", 6));
        assert_eq!(found[0].name(), "money.py:6 `+` → `-`");
        assert_eq!(
            found[0].apply(MONEY).unwrap(),
            MONEY.replace("cents + other", "cents - other")
        );
        assert!(report("Traceback: no").is_err());
    }

    #[test]
    fn the_empty_line_after_the_files_last_newline_is_context_that_fits() {
        let r = Reported {
            path: "m.py".into(),
            line: 2,
            diff: "--- m.py\n+++ m.py\n@@ -1,3 +1,3 @@\n x = 1\n-y = x + 1\n+y = x - 1\n \n".into(),
        };
        assert_eq!(r.apply("x = 1\ny = x + 1\n").unwrap(), "x = 1\ny = x - 1\n");
    }

    #[test]
    fn a_diff_that_does_not_fit_the_file_applies_to_nothing() {
        let found = report(REPORT).unwrap();
        assert_eq!(found[0].apply("class Other:\n    pass\n"), None);
    }

    #[test]
    fn a_constant_changed_in_place_is_named_by_what_changed() {
        let r = Reported {
            path: "m.py".into(),
            line: 2,
            diff: "@@ -1,2 +1,2 @@\n x = 1\n-def f(c=\"EUR\"):\n+def f(c=\"XXEURXX\"):\n".into(),
        };
        assert_eq!(r.name(), "m.py:2 `EUR` → `XXEURXX`");
        assert_eq!(
            r.apply("x = 1\ndef f(c=\"EUR\"):\n    pass\n").unwrap(),
            "x = 1\ndef f(c=\"XXEURXX\"):\n    pass\n"
        );
    }
}
