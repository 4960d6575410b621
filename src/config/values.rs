//! What a value in `.orchestrate.toml` must be (not empty, positive, a duration), checked
//! as it is read, so that the error names the key.

use std::time::Duration;

use serde::{Deserialize, Deserializer};

pub(super) fn non_empty<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    let s = String::deserialize(d)?;
    if s.trim().is_empty() {
        return Err(serde::de::Error::custom("must not be empty"));
    }
    Ok(s)
}

pub(super) fn positive<'de, D: Deserializer<'de>>(d: D) -> Result<usize, D::Error> {
    let n = usize::deserialize(d)?;
    if n == 0 {
        return Err(serde::de::Error::custom("must be at least 1"));
    }
    Ok(n)
}

pub(super) fn positive_u32<'de, D: Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
    let n = u32::deserialize(d)?;
    if n == 0 {
        return Err(serde::de::Error::custom("must be at least 1"));
    }
    Ok(n)
}

pub(super) fn optional_duration<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<Option<Duration>, D::Error> {
    duration(d).map(Some)
}

pub(super) fn optional_non_empty<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<Option<String>, D::Error> {
    non_empty(d).map(Some)
}

pub(super) fn duration<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
    let s = String::deserialize(d)?;
    parse_duration(&s).map_err(serde::de::Error::custom)
}

/// Parses `"10m"`, `"30s"`, `"1h30m"`, `"500ms"`. A bare number is refused: its unit would
/// be a guess.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let bad = || {
        format!(
            "invalid duration \"{text}\": use a number with a unit, like \"500ms\", \"30s\", \"10m\" or \"1h30m\""
        )
    };
    let mut rest = text.trim();
    if rest.is_empty() {
        return Err(bad());
    }
    let mut total = Duration::ZERO;
    while !rest.is_empty() {
        let digits = rest.find(|c: char| !c.is_ascii_digit()).ok_or_else(bad)?;
        if digits == 0 {
            return Err(bad());
        }
        let n: u64 = rest[..digits].parse().map_err(|_| bad())?;
        rest = &rest[digits..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit())
            .unwrap_or(rest.len());
        let unit = match &rest[..unit_len] {
            "ms" => Duration::from_millis(n),
            "s" => Duration::from_secs(n),
            "m" => Duration::from_secs(n.saturating_mul(60)),
            "h" => Duration::from_secs(n.saturating_mul(3600)),
            _ => return Err(bad()),
        };
        total = total.saturating_add(unit);
        rest = &rest[unit_len..];
    }
    if total.is_zero() {
        return Err(format!(
            "invalid duration \"{text}\": must be longer than zero"
        ));
    }
    Ok(total)
}
