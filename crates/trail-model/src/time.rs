//! Timestamp normalization: every timestamp in the store is ISO-8601 UTC with milliseconds
//! (`2026-01-31T00:34:50.049Z`), so text comparison orders them.

use chrono::{DateTime, SecondsFormat, TimeZone, Utc};

/// Normalizes an RFC 3339 / ISO-8601 string (any offset, any precision) to UTC with
/// milliseconds. Returns `None` for text that is not a timestamp.
pub fn normalize(ts: &str) -> Option<String> {
    let ts = ts.trim();
    if ts.is_empty() {
        return None;
    }
    if let Ok(dt) = DateTime::parse_from_rfc3339(ts) {
        return Some(format_utc(dt.with_timezone(&Utc)));
    }
    // "2025-06-14 11:00:00" and "2025-06-14T11:00:00" without an offset are taken as UTC.
    for fmt in ["%Y-%m-%dT%H:%M:%S%.f", "%Y-%m-%d %H:%M:%S%.f"] {
        if let Ok(naive) = chrono::NaiveDateTime::parse_from_str(ts, fmt) {
            return Some(format_utc(Utc.from_utc_datetime(&naive)));
        }
    }
    None
}

/// Converts Unix epoch milliseconds to the store's timestamp format.
pub fn from_epoch_millis(ms: i64) -> Option<String> {
    Utc.timestamp_millis_opt(ms).single().map(format_utc)
}

/// Converts a JSON number or string that may be epoch seconds, epoch milliseconds or ISO text.
pub fn from_json(v: &serde_json::Value) -> Option<String> {
    match v {
        serde_json::Value::String(s) => normalize(s),
        serde_json::Value::Number(n) => {
            let f = n.as_f64()?;
            // Values below 1e11 are seconds (1e11 s is the year 5138).
            let ms = if f.abs() < 1e11 { f * 1000.0 } else { f };
            from_epoch_millis(ms as i64)
        }
        _ => None,
    }
}

/// Returns a store timestamp moved by `seconds` (negative: earlier), in the store's format.
pub fn shift_seconds(ts: &str, seconds: i64) -> Option<String> {
    let dt = DateTime::parse_from_rfc3339(ts.trim()).ok()?;
    let moved = dt.checked_add_signed(chrono::TimeDelta::try_seconds(seconds)?)?;
    Some(format_utc(moved.with_timezone(&Utc)))
}

/// Formats a UTC time as the store does.
pub fn format_utc(dt: DateTime<Utc>) -> String {
    dt.to_rfc3339_opts(SecondsFormat::Millis, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalizes_offsets_and_precision() {
        assert_eq!(
            normalize("2026-01-31T00:34:50.049Z").as_deref(),
            Some("2026-01-31T00:34:50.049Z")
        );
        assert_eq!(
            normalize("2025-06-14T11:00:00Z").as_deref(),
            Some("2025-06-14T11:00:00.000Z")
        );
        assert_eq!(
            normalize("2025-06-14T13:00:00.123456+02:00").as_deref(),
            Some("2025-06-14T11:00:00.123Z")
        );
        assert_eq!(normalize("yesterday"), None);
    }

    #[test]
    fn shifts() {
        assert_eq!(
            shift_seconds("2025-05-02T09:00:00.000Z", -60).as_deref(),
            Some("2025-05-02T08:59:00.000Z")
        );
        assert_eq!(shift_seconds("soon", 1), None);
    }

    #[test]
    fn epoch_numbers() {
        let v = serde_json::json!(1_700_000_000_000i64);
        assert_eq!(from_json(&v).as_deref(), Some("2023-11-14T22:13:20.000Z"));
        let v = serde_json::json!(1_700_000_000);
        assert_eq!(from_json(&v).as_deref(), Some("2023-11-14T22:13:20.000Z"));
    }
}
