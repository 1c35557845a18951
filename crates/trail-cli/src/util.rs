//! Small parsing helpers for command arguments.

use chrono::{DateTime, Duration, NaiveDate, Utc};
use trail_report::DayZone;

use crate::error::{CliError, CliResult};

/// Resolves an optional `--since`/`--until` value with [`parse_time`]; a bad one is a usage
/// error.
pub fn time_arg(
    s: &Option<String>,
    now: DateTime<Utc>,
    zone: &DayZone,
) -> CliResult<Option<String>> {
    s.as_deref()
        .map(|s| parse_time(s, now, zone))
        .transpose()
        .map_err(CliError::usage)
}

/// Parses `--since`/`--until`: a duration back from now (`30m`, `24h`, `7d`, `2w`), a date
/// (`2026-11-01`: the start of that day in `zone`) or an RFC 3339 time. Returns the store's
/// timestamp format.
pub fn parse_time(s: &str, now: DateTime<Utc>, zone: &DayZone) -> Result<String, String> {
    let s = s.trim();
    let bad = || {
        format!("cannot read {s:?} as a time: use a duration like 30m, 24h, 7d, 2w, or a date like 2026-11-01")
    };
    if let Some(unit) = s.chars().last().filter(|c| c.is_ascii_alphabetic()) {
        let num = &s[..s.len() - 1];
        if let Ok(n) = num.parse::<i64>() {
            let d = match unit {
                'm' => Duration::minutes(n),
                'h' => Duration::hours(n),
                'd' => Duration::days(n),
                'w' => Duration::weeks(n),
                _ => return Err(bad()),
            };
            return Ok(trail_model::time::format_utc(now - d));
        }
    }
    if NaiveDate::parse_from_str(s, "%Y-%m-%d").is_ok() {
        return zone
            .start_of_day(s)
            .ok_or_else(|| format!("{s} does not exist in {}", zone.name()));
    }
    trail_model::time::normalize(s).ok_or_else(bad)
}

/// Quotes `s` for a POSIX shell when it needs it (`'it'\''s'`).
pub fn shell_quote(s: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "-_./:=@%+,".contains(c);
    if !s.is_empty() && s.chars().all(safe) {
        return s.to_string();
    }
    format!("'{}'", s.replace('\'', "'\\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_and_dates() {
        let now = DateTime::parse_from_rfc3339("2026-11-21T12:00:00Z")
            .unwrap()
            .with_timezone(&Utc);
        assert_eq!(
            parse_time("24h", now, &DayZone::utc()).unwrap(),
            "2026-11-20T12:00:00.000Z"
        );
        assert_eq!(
            parse_time("7d", now, &DayZone::utc()).unwrap(),
            "2026-11-14T12:00:00.000Z"
        );
        assert_eq!(
            parse_time("2026-11-01", now, &DayZone::utc()).unwrap(),
            "2026-11-01T00:00:00.000Z"
        );
        assert!(parse_time("soon", now, &DayZone::utc()).is_err());
    }

    #[test]
    fn shell_quoting() {
        assert_eq!(shell_quote("abc-1.rs"), "abc-1.rs");
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
        assert_eq!(shell_quote(""), "''");
    }
}
