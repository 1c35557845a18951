//! Times as people and agents write them: `30m`, `24h`, `7d`, `2w` back from now, a date (the
//! start of that day in a zone) or an RFC 3339 time; resolved to the store's ISO-8601 UTC text.

use chrono::{DateTime, Duration, NaiveDate, Utc};
use trail_report::DayZone;
use trail_store::Timestamp;

/// "Now" and the zone dates are read in: one per request, so that every bound of a request is
/// resolved against the same instant.
#[derive(Debug, Clone)]
pub struct Clock {
    pub now: DateTime<Utc>,
    pub zone: DayZone,
}

impl Clock {
    /// The current time, dates in UTC.
    pub fn utc_now() -> Clock {
        Clock {
            now: Utc::now(),
            zone: DayZone::utc(),
        }
    }

    /// Resolves an optional `since`/`until` value.
    pub fn resolve(&self, s: Option<&str>) -> Result<Option<Timestamp>, String> {
        s.map(|s| parse_time(s, self.now, &self.zone)).transpose()
    }

    /// The store time `d` before now.
    pub fn ago(&self, d: Duration) -> Timestamp {
        Timestamp::from_utc(self.now - d)
    }

    /// The store time `d` after now.
    pub fn ahead(&self, d: Duration) -> Timestamp {
        Timestamp::from_utc(self.now + d)
    }
}

/// Parses `since`/`until`: a duration back from now (`30m`, `24h`, `7d`, `2w`), a date
/// (`2026-11-01`: the start of that day in `zone`) or an RFC 3339 time. Returns the store's
/// timestamp format.
pub fn parse_time(s: &str, now: DateTime<Utc>, zone: &DayZone) -> Result<Timestamp, String> {
    let s = s.trim();
    let bad = || {
        format!("cannot read {s:?} as a time: use a duration like 30m, 24h, 7d, 2w, or a date like 2026-11-01")
    };
    if let Some(unit) = s.chars().last().filter(|c| c.is_ascii_alphabetic()) {
        let num = &s[..s.len() - 1];
        if let Ok(n) = num.parse::<i64>() {
            let d = match unit {
                'm' => Duration::try_minutes(n),
                'h' => Duration::try_hours(n),
                'd' => Duration::try_days(n),
                'w' => Duration::try_weeks(n),
                _ => return Err(bad()),
            }
            .filter(|d| now.checked_sub_signed(*d).is_some())
            .ok_or_else(bad)?;
            return Ok(Timestamp::from_utc(now - d));
        }
    }
    if NaiveDate::parse_from_str(s, "%Y-%m-%d").is_ok() {
        return zone
            .start_of_day(s)
            .map(Timestamp::from)
            .ok_or_else(|| format!("{s} does not exist in {}", zone.name()));
    }
    Timestamp::parse(s).ok_or_else(bad)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_and_dates() {
        let now = DateTime::parse_from_rfc3339("2026-11-21T12:00:00Z")
            .unwrap()
            .with_timezone(&Utc);
        let utc = DayZone::utc();
        assert_eq!(
            parse_time("24h", now, &utc).unwrap().as_str(),
            "2026-11-20T12:00:00.000Z"
        );
        assert_eq!(
            parse_time("7d", now, &utc).unwrap().as_str(),
            "2026-11-14T12:00:00.000Z"
        );
        assert_eq!(
            parse_time("2026-11-01", now, &utc).unwrap().as_str(),
            "2026-11-01T00:00:00.000Z"
        );
        assert!(parse_time("soon", now, &utc).is_err());
        // A duration too large to subtract is an error, not a panic.
        assert!(parse_time("9223372036854775807d", now, &utc).is_err());
    }
}
