//! The time zone whose calendar days a report counts in (`trail usage --tz`).
//!
//! The store keeps every timestamp in UTC and its rollup by UTC day; a developer in Bangalore or
//! San Francisco thinks of "yesterday" in local days, as ccusage reports them. Time zone rules
//! come from jiff: the system's tz database, with jiff's bundled copy when the system has none.

use jiff::civil::Date;
use jiff::tz::{Offset, TimeZone};
use jiff::Timestamp;

/// A time zone days are counted in.
#[derive(Debug, Clone)]
pub struct DayZone {
    tz: TimeZone,
    name: String,
}

impl Default for DayZone {
    fn default() -> Self {
        DayZone::utc()
    }
}

impl DayZone {
    /// UTC: the store's own days.
    pub fn utc() -> DayZone {
        DayZone {
            tz: TimeZone::UTC,
            name: "UTC".into(),
        }
    }

    /// Reads `UTC`, `local` (the system's zone), an offset (`+05:30`, `-08:00`, `+9`) or an IANA
    /// name (`Europe/Paris`).
    pub fn parse(spec: &str) -> Result<DayZone, String> {
        let spec = spec.trim();
        if spec.eq_ignore_ascii_case("utc") || spec == "Z" {
            return Ok(DayZone::utc());
        }
        if spec.eq_ignore_ascii_case("local") {
            let tz = TimeZone::try_system()
                .map_err(|e| format!("cannot find this system's time zone: {e}"))?;
            let name = tz.iana_name().unwrap_or("local").to_string();
            return Ok(DayZone { tz, name });
        }
        if spec.starts_with(['+', '-']) {
            let offset = parse_offset(spec).ok_or_else(|| {
                format!("cannot read {spec:?} as a UTC offset: use +05:30, -08:00 or +9")
            })?;
            return Ok(DayZone {
                tz: TimeZone::fixed(offset),
                name: spec.to_string(),
            });
        }
        let tz = TimeZone::get(spec).map_err(|_| {
            format!("unknown time zone {spec:?}: use UTC, local, an offset like +05:30, or a name like Europe/Paris")
        })?;
        Ok(DayZone {
            tz,
            name: spec.to_string(),
        })
    }

    /// Whether days are UTC days (the rollup's own, read without conversion).
    pub fn is_utc(&self) -> bool {
        self.tz.to_fixed_offset().is_ok_and(|o| o == Offset::UTC)
    }

    /// The zone as the user named it (`UTC`, `Europe/Paris`, `+05:30`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The day (`YYYY-MM-DD`) of a stored UTC timestamp, in this zone.
    pub fn day_of(&self, timestamp: &str) -> Option<String> {
        let ts: Timestamp = timestamp.parse().ok()?;
        Some(self.tz.to_datetime(ts).date().to_string())
    }

    /// A stored UTC timestamp as this zone's `YYYY-MM-DD HH:MM`.
    pub fn minute_of(&self, timestamp: &str) -> Option<String> {
        let ts: Timestamp = timestamp.parse().ok()?;
        Some(
            self.tz
                .to_datetime(ts)
                .strftime("%Y-%m-%d %H:%M")
                .to_string(),
        )
    }

    /// The UTC instant (store format) at which `day` (`YYYY-MM-DD`) begins in this zone.
    pub fn start_of_day(&self, day: &str) -> Option<String> {
        let date: Date = day.parse().ok()?;
        let start = date.to_zoned(self.tz.clone()).ok()?.start_of_day().ok()?;
        let ms = start.timestamp().as_millisecond();
        let utc = chrono::DateTime::from_timestamp_millis(ms)?;
        Some(trail_model::time::format_utc(utc))
    }
}

/// `+05:30`, `-0800`, `+9`: at most ±25:59, as offsets go.
fn parse_offset(s: &str) -> Option<Offset> {
    let (sign, rest) = match s.as_bytes().first()? {
        b'+' => (1, &s[1..]),
        b'-' => (-1, &s[1..]),
        _ => return None,
    };
    let (h, m) = match rest.split_once(':') {
        Some((h, m)) => (h, m),
        None if rest.len() == 4 => rest.split_at(2),
        None => (rest, "0"),
    };
    if h.is_empty() || h.len() > 2 || m.is_empty() || m.len() > 2 {
        return None;
    }
    let (h, m): (i32, i32) = (h.parse().ok()?, m.parse().ok()?);
    if h > 25 || m > 59 {
        return None;
    }
    Offset::from_seconds(sign * (h * 3600 + m * 60)).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_offsets() {
        assert!(DayZone::parse("UTC").unwrap().is_utc());
        assert!(DayZone::parse("utc").unwrap().is_utc());
        assert!(DayZone::parse("+00:00").unwrap().is_utc());
        assert!(!DayZone::parse("+05:30").unwrap().is_utc());
        assert!(!DayZone::parse("Europe/Paris").unwrap().is_utc());
        assert_eq!(DayZone::parse("-0800").unwrap().name(), "-0800");
        for bad in ["Mars/Olympus", "+", "+5:3:0", "+99", "-08:60", "+123"] {
            assert!(DayZone::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn days_move_with_the_zone() {
        let ts = "2026-01-05T23:30:00.000Z";
        assert_eq!(DayZone::utc().day_of(ts).unwrap(), "2026-01-05");
        assert_eq!(
            DayZone::parse("+05:30").unwrap().day_of(ts).unwrap(),
            "2026-01-06"
        );
        assert_eq!(
            DayZone::parse("-08:00")
                .unwrap()
                .day_of("2026-01-06T03:00:00Z")
                .unwrap(),
            "2026-01-05"
        );
        // Paris is UTC+1 in winter and UTC+2 in summer.
        let paris = DayZone::parse("Europe/Paris").unwrap();
        assert_eq!(paris.day_of("2026-01-05T22:30:00Z").unwrap(), "2026-01-05");
        assert_eq!(paris.day_of("2026-07-05T22:30:00Z").unwrap(), "2026-07-06");
        assert_eq!(paris.day_of("not a time"), None);
    }

    #[test]
    fn minutes_in_the_zone() {
        let ist = DayZone::parse("+05:30").unwrap();
        assert_eq!(
            ist.minute_of("2026-01-05T23:30:00.000Z").unwrap(),
            "2026-01-06 05:00"
        );
        assert_eq!(
            DayZone::utc().minute_of("2026-01-05T23:30:00Z").unwrap(),
            "2026-01-05 23:30"
        );
    }

    #[test]
    fn a_day_starts_at_local_midnight() {
        let ist = DayZone::parse("+05:30").unwrap();
        assert_eq!(
            ist.start_of_day("2026-01-06").unwrap(),
            "2026-01-05T18:30:00.000Z"
        );
        let paris = DayZone::parse("Europe/Paris").unwrap();
        assert_eq!(
            paris.start_of_day("2026-07-06").unwrap(),
            "2026-07-05T22:00:00.000Z"
        );
        assert_eq!(
            DayZone::utc().start_of_day("2026-01-06").unwrap(),
            "2026-01-06T00:00:00.000Z"
        );
        assert_eq!(ist.start_of_day("2026-13-01"), None);
    }
}
