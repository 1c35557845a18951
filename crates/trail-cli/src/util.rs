//! Small parsing helpers for command arguments.

use chrono::{DateTime, Duration, NaiveDate, Utc};

/// Parses `--since`/`--until`: a duration back from now (`30m`, `24h`, `7d`, `2w`), a date
/// (`2026-11-01`, midnight UTC) or an RFC 3339 time. Returns the store's timestamp format.
pub fn parse_time(s: &str, now: DateTime<Utc>) -> Result<String, String> {
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
    if let Ok(d) = NaiveDate::parse_from_str(s, "%Y-%m-%d") {
        let dt = d.and_hms_opt(0, 0, 0).ok_or_else(bad)?.and_utc();
        return Ok(trail_model::time::format_utc(dt));
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
        assert_eq!(parse_time("24h", now).unwrap(), "2026-11-20T12:00:00.000Z");
        assert_eq!(parse_time("7d", now).unwrap(), "2026-11-14T12:00:00.000Z");
        assert_eq!(
            parse_time("2026-11-01", now).unwrap(),
            "2026-11-01T00:00:00.000Z"
        );
        assert!(parse_time("soon", now).is_err());
    }

    #[test]
    fn shell_quoting() {
        assert_eq!(shell_quote("abc-1.rs"), "abc-1.rs");
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
        assert_eq!(shell_quote(""), "''");
    }
}
