//! Claims on PRs as plain data (docs/refs.md, "Claims"): the key a PR is claimed by (the slug of its
//! master-plan heading), and what a claimer may do given the claim it finds.

use super::master_plan;

/// A claim holds until its expiry plus this margin, for clocks that disagree.
pub const SKEW_SECONDS: i64 = 5 * 60;

/// The longest slug: a ref name component, readable in a listing.
const MAX_SLUG: usize = 64;

/// `text` as a ref name component: ASCII letters and digits in lower case, every other run
/// of characters one `-`, at most 64 characters; `pr` when nothing is left. Letters outside
/// ASCII are not kept (not every one makes a valid ref name): a text that has them gets a
/// hash of itself appended, so that two titles in another script do not share a key.
pub fn slug(text: &str) -> String {
    let mut out = String::new();
    let mut dash = false;
    let mut foreign = false;
    for c in text.chars() {
        if c.is_ascii_alphanumeric() {
            if dash && !out.is_empty() {
                out.push('-');
            }
            dash = false;
            out.push(c.to_ascii_lowercase());
        } else {
            foreign |= c.is_alphanumeric();
            dash = true;
        }
    }
    out.truncate(if foreign { MAX_SLUG - 9 } else { MAX_SLUG });
    let mut out = out.trim_end_matches('-').to_string();
    if foreign {
        if !out.is_empty() {
            out.push('-');
        }
        out.push_str(&format!("{:08x}", fnv1a(text.to_lowercase().as_bytes())));
    }
    if out.is_empty() {
        "pr".to_string()
    } else {
        out
    }
}

/// 32-bit FNV-1a: the same on every machine and release, as a claim key must be.
fn fnv1a(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0x811c_9dc5, |hash: u32, b| {
        (hash ^ u32::from(*b)).wrapping_mul(0x0100_0193)
    })
}

/// The key the PR titled `title` is claimed by: the slug of the master plan's open heading
/// that names it (`## PR 2: feat: Multiply` → `pr-2-feat-multiply`), else of the title. A
/// title that differs from a heading's only in case, spacing or punctuation (`feat:  multiply.`)
/// names that heading too: else a claimer would dodge the claim by retyping the title.
pub fn pr_slug(master_plan: Option<&str>, title: &str) -> String {
    let key = slug(title);
    master_plan
        .and_then(|text| {
            let open = master_plan::open_prs(text);
            let exact = open
                .iter()
                .find(|heading| master_plan::names_pr(heading, title));
            exact
                .or_else(|| {
                    open.iter()
                        .find(|heading| slug(master_plan::heading_title(heading)) == key)
                })
                .cloned()
        })
        .map_or(key, |heading| slug(&heading))
}

/// The master plan's heading that marks the PR titled `title` [DONE], when no open heading
/// names it: that PR was merged already.
pub fn done_heading(text: &str, title: &str) -> Option<String> {
    let headings = master_plan::pr_headings(text);
    if headings
        .iter()
        .any(|(h, done)| !done && master_plan::names_pr(h, title))
    {
        return None;
    }
    headings.into_iter().find_map(|(heading, done)| {
        // A [DONE] heading's title ends before the marker.
        let at = heading.to_ascii_lowercase().find("[done]")?;
        (done && master_plan::names_pr(heading[..at].trim_end(), title)).then_some(heading)
    })
}

/// A claim as a claimer finds it: who holds it, until when, and whether the commit is the
/// one this clone wrote for this workflow.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Found<'a> {
    pub workflow: &'a str,
    pub expires: i64,
    /// The commit there is this clone's own claim for the workflow asking.
    pub ours: bool,
}

/// What a claimer does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Nobody holds it: create it.
    Take,
    /// This workflow holds it already: renew it.
    Renew,
    /// Its holder let it expire: replace it, leasing against the expired commit.
    TakeOver,
    /// Another holds it.
    Lost,
}

/// What a claimer in `workflow` may do at `now` (seconds) with the claim `found`.
pub fn judge(found: Option<&Found>, workflow: &str, now: i64) -> Verdict {
    match found {
        None => Verdict::Take,
        Some(f) if f.ours && f.workflow == workflow => Verdict::Renew,
        Some(f) if expired(f.expires, now) => Verdict::TakeOver,
        Some(_) => Verdict::Lost,
    }
}

/// The key a plan for the PR titled `title` claims, given the master plan as the remote's
/// main (else this clone's) has it: `Err` with the heading that marks that PR [DONE], when it
/// was merged already and no open heading names it.
pub fn claim_key(master_plan: Option<&str>, title: &str) -> Result<String, String> {
    if let Some(heading) = master_plan.and_then(|text| done_heading(text, title)) {
        return Err(heading);
    }
    Ok(pr_slug(master_plan, title))
}

/// The claim a claimer finds on its PR: as [`Found`], with when its holder took it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Held<'a> {
    pub found: Found<'a>,
    /// When the claim there was taken (`None`: the ref holds no claim of ours).
    pub since: Option<i64>,
}

/// The times of the claim a claimer in `workflow` writes at `now` for `ttl` seconds over
/// `held`, as `(since, expires)`; `None` when another holds it. A renewal keeps the time
/// its claim was first taken.
pub fn claim_times(held: Option<&Held>, workflow: &str, now: i64, ttl: i64) -> Option<(i64, i64)> {
    let since = match (judge(held.map(|h| &h.found), workflow, now), held) {
        (Verdict::Lost, _) => return None,
        (
            Verdict::Renew,
            Some(Held {
                since: Some(since), ..
            }),
        ) => *since,
        _ => now,
    };
    Some((since, now.saturating_add(ttl)))
}

/// True once a claim expiring at `expires` is past its expiry and the skew margin.
pub fn expired(expires: i64, now: i64) -> bool {
    now > expires.saturating_add(SKEW_SECONDS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use proptest::prelude::*;

    #[test]
    fn slugs_name_the_heading() {
        for (text, expected) in [
            ("PR 2: feat: Multiply numbers", "pr-2-feat-multiply-numbers"),
            ("PR-3 Divide", "pr-3-divide"),
            ("  --Plain Ωmega!! ", "plain-mega-b4e3c021"),
            ("Ωmega", "mega-65902883"),
            ("Ω", "c6a65895"),
            ("!!!", "pr"),
            ("", "pr"),
            ("PR 1: ../../refs/heads/main", "pr-1-refs-heads-main"),
        ] {
            assert_eq!(slug(text), expected, "{text:?}");
        }
        assert_eq!(slug(&"ab ".repeat(100)).chars().count(), 64);
    }

    #[test]
    fn a_pr_is_keyed_by_its_open_heading_else_its_title() {
        let plan = "# Plan\n## PR 1: feat: Add [DONE] abc\n## PR 2: feat: Multiply\n";
        assert_eq!(pr_slug(Some(plan), "feat: multiply"), "pr-2-feat-multiply");
        assert_eq!(pr_slug(Some(plan), "feat: Divide"), "feat-divide");
        for near in ["feat:  Multiply ", "Feat - multiply.", "feat/multiply"] {
            assert_eq!(pr_slug(Some(plan), near), "pr-2-feat-multiply", "{near:?}");
        }
        // A done PR is no longer a key to match.
        assert_eq!(pr_slug(Some(plan), "feat: add"), "feat-add");
        assert_eq!(pr_slug(None, "feat: Multiply"), "feat-multiply");
    }

    #[test]
    fn a_pr_marked_done_is_named_unless_an_open_heading_names_it_too() {
        let plan =
            "## PR 1: feat: Add [DONE] abc\n## PR 2: feat: Mul [done] def ##\n## PR 3: feat: Add\n";
        assert_eq!(
            done_heading(plan, "feat: mul").as_deref(),
            Some("PR 2: feat: Mul [done] def")
        );
        assert_eq!(done_heading(plan, "feat: Add"), None, "PR 3 is open");
        assert_eq!(done_heading(plan, "feat: Div"), None);
        assert_eq!(
            done_heading("## PR 1: feat: Add [DONE]\n", "feat: Add [DONE]"),
            None
        );
    }

    #[test]
    fn the_verdict_follows_holder_and_expiry() {
        let now = 10_000;
        let held = |workflow, expires, ours| Found {
            workflow,
            expires,
            ours,
        };
        let cases = [
            (None, Verdict::Take),
            (Some(held("a", now + 60, true)), Verdict::Renew),
            // Expired, and ours: still ours to renew.
            (Some(held("a", now - 3600, true)), Verdict::Renew),
            (Some(held("b", now + 60, false)), Verdict::Lost),
            // Same name, another clone's commit: not ours.
            (Some(held("a", now + 60, false)), Verdict::Lost),
            // Within the skew margin: still held.
            (Some(held("b", now - SKEW_SECONDS, false)), Verdict::Lost),
            (
                Some(held("b", now - SKEW_SECONDS - 1, false)),
                Verdict::TakeOver,
            ),
            // This clone's commit for another workflow (a sibling worktree).
            (Some(held("b", now + 60, true)), Verdict::Lost),
            (Some(held("b", i64::MAX, false)), Verdict::Lost),
        ];
        for (found, expected) in cases {
            assert_eq!(judge(found.as_ref(), "a", now), expected, "{found:?}");
        }
    }

    #[test]
    fn a_plan_claims_its_open_headings_key_unless_the_pr_is_done() {
        let plan = "## PR 1: feat: Add [DONE] abc\n## PR 2: feat: Mul\n";
        #[rustfmt::skip]
        let table = [
            ("an open heading names it", Some(plan), "feat: mul", Ok("pr-2-feat-mul")),
            ("its heading is done", Some(plan), "feat: Add", Err("PR 1: feat: Add [DONE] abc")),
            ("no heading names it", Some(plan), "feat: Div", Ok("feat-div")),
            ("no master plan", None, "feat: Add", Ok("feat-add")),
        ];
        for (name, master_plan, title, expected) in table {
            let expected = expected.map(str::to_string).map_err(str::to_string);
            assert_eq!(claim_key(master_plan, title), expected, "{name}");
        }
    }

    #[test]
    fn a_claim_is_written_with_its_first_time_when_renewed_and_now_otherwise() {
        let (now, ttl) = (10_000, 3_600);
        let held = |workflow, expires, ours, since| Held {
            found: Found {
                workflow,
                expires,
                ours,
            },
            since,
        };
        #[rustfmt::skip]
        let table = [
            ("nobody holds it", None, Some((now, now + ttl))),
            ("ours: renewed, its first time kept", Some(held("a", now + 60, true, Some(5))), Some((5, now + ttl))),
            ("ours but unreadable: taken now", Some(held("", 0, true, None)), Some((now, now + ttl))),
            ("another's, live", Some(held("b", now + 60, false, Some(5))), None),
            ("another's, lapsed: taken over now", Some(held("b", 0, false, Some(5))), Some((now, now + ttl))),
            ("junk in the ref: replaced", Some(held("", 0, false, None)), Some((now, now + ttl))),
        ];
        for (name, found, expected) in table {
            assert_eq!(
                claim_times(found.as_ref(), "a", now, ttl),
                expected,
                "{name}"
            );
        }
        assert_eq!(claim_times(None, "a", now, i64::MAX), Some((now, i64::MAX)));
    }

    proptest! {
        /// A slug is always one valid ref name component.
        #[test]
        fn every_slug_is_a_ref_component(text in "\\PC{0,80}") {
            let s = slug(&text);
            let name = format!("refs/orchestrator/claims/{s}");
            prop_assert!(gix::refs::FullName::try_from(name.as_str()).is_ok(), "{}", name);
            prop_assert!(!s.is_empty() && s.len() <= 64);
        }
    }
}
