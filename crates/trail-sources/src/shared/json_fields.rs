//! Small readers of `serde_json::Value` fields shared by the formats that hold JSON.

use serde_json::Value;

/// The string at `key` of an object, if it is one.
pub(crate) fn jstr<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

/// A non-negative count from a JSON number (floats truncated, negatives and junk are 0).
pub(crate) fn jcount(v: Option<&Value>) -> u64 {
    match v {
        Some(Value::Number(n)) => n.as_u64().unwrap_or_else(|| {
            n.as_f64()
                .filter(|f| f.is_finite() && *f > 0.0)
                .map_or(0, |f| f as u64)
        }),
        _ => 0,
    }
}

/// A JSON value as text: strings as they are, anything else serialized.
pub(crate) fn value_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}
