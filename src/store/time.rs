//! Commit times as `2026-11-22 14:03:07 +0100`, without a date library.

/// Formats a git time in its own offset, as `git log --date=iso` does.
pub fn format_time(time: gix::date::Time) -> String {
    let local = time.seconds + i64::from(time.offset);
    let days = local.div_euclid(86_400);
    let secs = local.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    let sign = if time.offset < 0 { '-' } else { '+' };
    let off = time.offset.unsigned_abs();
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02} {sign}{:02}{:02}",
        secs / 3600,
        secs % 3600 / 60,
        secs % 60,
        off / 3600,
        off % 3600 / 60
    )
}

/// Days since 1970-01-01 to (year, month, day); Howard Hinnant's algorithm.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
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
