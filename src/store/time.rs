//! Commit times as `2026-11-22 14:03:07 +0100`, in the commit's own offset, as `git log
//! --date=iso` shows them (gix-date formats them).

/// Formats a git time in its own offset, as `git log --date=iso` does; a time no calendar
/// holds is shown as seconds since the epoch, as git's raw format has it.
pub fn format_time(time: gix::date::Time) -> String {
    time.format_or_unix(gix::date::time::format::ISO8601)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_like_git() {
        assert_eq!(
            format_time(gix::date::Time::new(0, 0)),
            "1970-01-01 00:00:00 +0000"
        );
        assert_eq!(
            format_time(gix::date::Time::new(1_795_000_000, 3600)),
            "2026-11-18 12:06:40 +0100"
        );
        assert_eq!(
            format_time(gix::date::Time::new(951_782_400, -19_800)),
            "2000-02-28 18:30:00 -0530"
        );
    }
}
