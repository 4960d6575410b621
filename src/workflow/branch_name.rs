//! Turns a PR title into a safe branch name (docs/agent-guide.md, "INITIALIZING"): `"feat: Implement New Feature"` →
//! `feat/implement-new-feature`, using only `[a-z0-9._/-]`.

use super::rejection::{Rejection, RejectionKind};
use super::status::Status;

/// Longest slug we produce; git allows more, people reading `git branch` do not.
const MAX_SLUG: usize = 60;

/// The branch name for a PR title, or `None` when the title has nothing to name it by.
///
/// A conventional-commit prefix (`feat:`, `fix(scope):`, `chore!:`) becomes a directory,
/// the rest a hyphenated slug. The result never starts with `-` or `.`, never contains `..`
/// or `//`, and never ends with `.`, `/` or `.lock`, so it passes git's ref-format rules.
pub fn sanitize(title: &str) -> Option<String> {
    let title = title.trim();
    let (prefix, rest) = match conventional_prefix(title) {
        Some((prefix, rest)) => (Some(prefix), rest),
        None => (None, title),
    };
    let slug = slug(rest).or_else(|| fallback(rest))?;
    Some(match prefix {
        Some(prefix) => format!("{prefix}/{slug}"),
        None => slug,
    })
}

/// The name to use when `base` is taken: `base-2`, `base-3`, …
pub fn numbered(base: &str, n: usize) -> String {
    if n <= 1 {
        base.to_string()
    } else {
        format!("{base}-{n}")
    }
}

/// True when `name` has the shape of a name [`sanitize`], [`numbered`] and a flattening of its
/// `/` make: an optional lower-case prefix of up to 16 letters and a `/`, then lower-case
/// words of letters and digits joined by single hyphens, 128 characters at most. What a
/// recorded plan acceptance may name as its branch: a chain written by hand could otherwise
/// record a name git reads as an option (`--orphan=x`), a pseudo-ref (`HEAD`) or a ref
/// outside `refs/heads/` (`refs/remotes/origin/main`), for every clone and server that
/// replays it.
pub fn could_be_made(name: &str) -> bool {
    let (prefix, slug) = match name.split_once('/') {
        Some((prefix, slug)) => (Some(prefix), slug),
        None => (None, name),
    };
    let word = |w: &str| {
        !w.is_empty()
            && w.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
    };
    name.len() <= 128
        && prefix.is_none_or(|p| {
            !p.is_empty() && p.len() <= 16 && p.chars().all(|c| c.is_ascii_lowercase())
        })
        && slug.split('-').all(word)
}

/// A PR branch that another workflow of this repository records.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BranchHolder {
    pub workflow: String,
    pub status: Status,
    pub branch: String,
}

/// Refuses `branch` to a workflow in `status` when another workflow drives it: two workflows
/// on one branch would check out, commit to and merge each other's work.
///
/// A plan (submitted in INITIALIZING) may not name a branch any other workflow records. In
/// CREATING_BRANCH the branch is refused only when its holder is past CREATING_BRANCH (it
/// created the branch): when two workflows were both given the name (before this check, or
/// in a race), the first to create the branch keeps it.
pub fn check_branch_free(
    branch: &str,
    status: Status,
    holders: &[BranchHolder],
) -> Result<(), Rejection> {
    let Some(holder) = holders.iter().find(|h| {
        h.branch == branch
            && (status != Status::CreatingBranch || h.status != Status::CreatingBranch)
    }) else {
        return Ok(());
    };
    let other = &holder.workflow;
    let hint = if status == Status::CreatingBranch {
        format!(
            "Workflow \"{other}\" drives this PR; this one can go on once that one is merged. To hand the \
             question to a human now: `git orchestrate escalate --report FILE`."
        )
    } else {
        format!(
            "Plan another PR of the master plan (a prTitle that names another branch), or continue this PR in \
             its workflow: `git orchestrate --workflow {other} get-task`."
        )
    };
    Err(Rejection {
        kind: RejectionKind::WrongState,
        state: status,
        message: format!(
            "the PR branch {branch} is already the branch of workflow \"{other}\" (state {}); two workflows \
             cannot drive one branch (state {status})",
            holder.status
        ),
        hint,
    })
}

fn conventional_prefix(title: &str) -> Option<(String, &str)> {
    let (head, rest) = title.split_once(':')?;
    let kind = head.split('(').next()?.trim_end_matches('!').trim();
    let is_word =
        !kind.is_empty() && kind.len() <= 16 && kind.chars().all(|c| c.is_ascii_alphabetic());
    is_word.then(|| (kind.to_ascii_lowercase(), rest))
}

/// A name for a title written in a script with no Latin letters (`"日本語のタイトル"`):
/// `pr-` and a short hash of the title, the same for the same title. `None` when the title
/// has no letter or digit at all.
fn fallback(text: &str) -> Option<String> {
    if !text.chars().any(char::is_alphanumeric) {
        return None;
    }
    // FNV-1a: stable across builds and platforms, which std's hasher does not promise.
    let hash = text.trim().bytes().fold(0x811c_9dc5_u32, |h, b| {
        (h ^ u32::from(b)).wrapping_mul(0x0100_0193)
    });
    Some(format!("pr-{hash:08x}"))
}

/// The ASCII letters a Latin letter with a diacritic (or a ligature) is read as, so that
/// `"ünïcödé título"` names `unicode-titulo`. Covers Latin-1 and Latin Extended-A.
fn ascii_of(c: char) -> Option<&'static str> {
    Some(match c {
        'à'..='å' | 'ā' | 'ă' | 'ą' => "a",
        'æ' => "ae",
        'ç' | 'ć' | 'ĉ' | 'ċ' | 'č' => "c",
        'ď' | 'đ' | 'ð' => "d",
        'è'..='ë' | 'ē' | 'ĕ' | 'ė' | 'ę' | 'ě' => "e",
        'ĝ' | 'ğ' | 'ġ' | 'ģ' => "g",
        'ĥ' | 'ħ' => "h",
        'ì'..='ï' | 'ĩ' | 'ī' | 'ĭ' | 'į' | 'ı' => "i",
        'ĳ' => "ij",
        'ĵ' => "j",
        'ķ' | 'ĸ' => "k",
        'ĺ' | 'ļ' | 'ľ' | 'ŀ' | 'ł' => "l",
        'ñ' | 'ń' | 'ņ' | 'ň' | 'ŉ' | 'ŋ' => "n",
        'ò'..='ö' | 'ø' | 'ō' | 'ŏ' | 'ő' => "o",
        'œ' => "oe",
        'ŕ' | 'ŗ' | 'ř' => "r",
        'ś' | 'ŝ' | 'ş' | 'š' | 'ſ' => "s",
        'ß' => "ss",
        'ţ' | 'ť' | 'ŧ' => "t",
        'þ' => "th",
        'ù'..='ü' | 'ũ' | 'ū' | 'ŭ' | 'ů' | 'ű' | 'ų' => "u",
        'ŵ' => "w",
        'ý' | 'ÿ' | 'ŷ' => "y",
        'ź' | 'ż' | 'ž' => "z",
        _ => return None,
    })
}

fn slug(text: &str) -> Option<String> {
    let mut out = String::new();
    let mut gap = false;
    let push = |part: &str, out: &mut String, gap: &mut bool| {
        if *gap && !out.is_empty() {
            out.push('-');
        }
        *gap = false;
        out.push_str(part);
    };
    for c in text.chars().flat_map(char::to_lowercase) {
        if c.is_ascii_alphanumeric() {
            push(c.encode_utf8(&mut [0; 4]), &mut out, &mut gap);
        } else if let Some(ascii) = ascii_of(c) {
            push(ascii, &mut out, &mut gap);
        } else {
            gap = true;
        }
    }
    if out.len() > MAX_SLUG {
        // Cut at a word boundary when there is one; the slug is ASCII, so any index is a char boundary.
        let cut = out[..=MAX_SLUG]
            .rfind('-')
            .filter(|i| *i > 0)
            .unwrap_or(MAX_SLUG);
        out.truncate(cut);
    }
    (!out.is_empty()).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    /// Every name `sanitize` and `numbered` make has the shape, flattened too; names git would
    /// read as an option, a pseudo-ref, a ref outside `refs/heads/` or no branch do not.
    #[test]
    fn the_names_sanitize_makes_could_be_made_and_hostile_ones_could_not() {
        for title in [
            "feat: Implement New Feature",
            "fix(core)!: a bug",
            "Add numbers",
            "x",
            "chore: ünïcode only ✓",
            "日本語のタイトル",
            &"long ".repeat(40),
        ] {
            let base = sanitize(title).expect(title);
            for name in [
                numbered(&base, 1),
                numbered(&base, 1000),
                base.replace('/', "-"),
            ] {
                assert!(could_be_made(&name), "{title:?} -> {name:?}");
            }
        }
        for hostile in [
            "",
            "-f",
            "--orphan=x",
            "feat/-x",
            ".hidden",
            "feat/.x",
            "a..b",
            "a//b",
            "a/",
            "a.",
            "a.lock",
            "a b",
            "a~1",
            "a^",
            "a:b",
            "a\\b",
            "a\nb",
            "../../config",
            "refs/../x",
            "HEAD",
            "Main",
            "refs/remotes/origin/main",
            "A/B/C/D",
            "a/b/c",
            "a--b",
            "a-",
            "a_b",
            "thisprefixistoolong/x",
            &"a".repeat(129),
        ] {
            assert!(!could_be_made(hostile), "{hostile:?}");
        }
    }

    proptest::proptest! {
        /// Any title's branch, numbered or flattened, has the shape a recorded plan
        /// acceptance is held to: an honest chain is never called forged for its branch.
        #[test]
        fn every_branch_a_title_makes_could_be_made(title in "\\PC{0,120}", n in 1usize..=1000) {
            if let Some(base) = sanitize(&title) {
                proptest::prop_assert!(could_be_made(&numbered(&base, n)), "{:?}", title);
                proptest::prop_assert!(could_be_made(&numbered(&base.replace('/', "-"), n)));
            }
        }
    }

    #[test]
    fn titles_become_branch_names() {
        let cases = [
            (
                "feat: Implement New Feature",
                Some("feat/implement-new-feature"),
            ),
            (
                "fix(parser)!: Don't crash on ..",
                Some("fix/don-t-crash-on"),
            ),
            ("Add the thing", Some("add-the-thing")),
            ("  --.lock ../../etc/passwd  ", Some("lock-etc-passwd")),
            ("feat: Ünïcödé Straße", Some("feat/unicode-strasse")),
            ("ünïcödé título", Some("unicode-titulo")),
            ("Łódź Æsir œuvre", Some("lodz-aesir-oeuvre")),
            ("日本語のタイトル", Some("pr-e4c4a99b")),
            ("feat: 日本語", Some("feat/pr-805f5ce7")),
            ("mixed 日本 title", Some("mixed-title")),
            ("chore: ~^:?*[\\ @{", None),
            ("???", None),
            ("refs/heads/main", Some("refs-heads-main")),
        ];
        for (title, expected) in cases {
            assert_eq!(sanitize(title).as_deref(), expected, "title {title:?}");
        }
    }

    #[test]
    fn long_titles_are_cut() {
        let name = sanitize(&format!("feat: {}", "word ".repeat(40))).unwrap();
        assert!(name.len() <= "feat/".len() + MAX_SLUG, "{name}");
        assert!(name.ends_with("-word"), "{name}");
    }

    #[test]
    fn taken_names_get_numbers() {
        assert_eq!(numbered("feat/x", 1), "feat/x");
        assert_eq!(numbered("feat/x", 3), "feat/x-3");
    }

    #[test]
    fn a_branch_another_workflow_drives_is_refused() {
        use Status::*;
        let holder = |status| BranchHolder {
            workflow: "other".into(),
            status,
            branch: "feat/x".into(),
        };
        let refused = |status, holder_status| {
            check_branch_free("feat/x", status, &[holder(holder_status)]).map_err(|r| r.message)
        };
        let taken = |holder_status, status| {
            Err(format!(
                "the PR branch feat/x is already the branch of workflow \"other\" (state {holder_status}); two \
                 workflows cannot drive one branch (state {status})"
            ))
        };
        assert_eq!(
            refused(Initializing, ExecutingTdd),
            taken(ExecutingTdd, Initializing)
        );
        assert_eq!(
            refused(Initializing, CreatingBranch),
            taken(CreatingBranch, Initializing)
        );
        assert_eq!(
            refused(CreatingBranch, Debugging),
            taken(Debugging, CreatingBranch)
        );
        assert_eq!(
            refused(CreatingBranch, CreatingBranch),
            Ok(()),
            "both only named it: the first to create it keeps it"
        );
        assert_eq!(
            check_branch_free("feat/y", Initializing, &[holder(ExecutingTdd)]),
            Ok(())
        );
        let r = check_branch_free("feat/x", CreatingBranch, &[holder(ExecutingTdd)]).unwrap_err();
        assert_eq!(r.kind, RejectionKind::WrongState);
    }
}
