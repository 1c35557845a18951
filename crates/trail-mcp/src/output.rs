//! What a tool answers: a readable text and the same data as structured content, redacted and
//! measured against the response cap.

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;
use trail_query::QueryError;
use trail_render::{RedactionCounts, Redactor};

/// A tool's answer before it goes on the wire.
#[derive(Debug, Clone)]
pub struct ToolOutput {
    /// For people and for clients that read only text.
    pub text: String,
    /// The same answer as the tool's output schema describes it (always a JSON object).
    pub structured: Value,
}

impl ToolOutput {
    /// Builds an answer from a serializable value and its text rendering.
    pub fn new(structured: &impl Serialize, text: String) -> ToolOutput {
        ToolOutput {
            text,
            structured: serde_json::to_value(structured).unwrap_or(Value::Null),
        }
    }

    /// Returns the characters this answer puts on the wire: the text plus the compact JSON of
    /// the structured content (what the cap limits).
    pub fn chars(&self) -> usize {
        self.text.chars().count() + json_chars(&self.structured)
    }

    /// Replaces every secret in the text and in every string of the structured content.
    /// Redacting twice changes nothing, so callers that measured a redacted answer can rely
    /// on its size.
    pub fn redact(&mut self, redactor: &Redactor) {
        if !redactor.enabled() {
            return;
        }
        let mut counts = RedactionCounts::default();
        if let std::borrow::Cow::Owned(t) = redactor.redact(&self.text, &mut counts) {
            self.text = t;
        }
        redact_value(&mut self.structured, redactor, &mut counts);
    }
}

/// A tool's failure, sent as a result with `isError` (the model reads the reason).
#[derive(Debug, Clone)]
pub struct ToolError(pub String);

impl From<serde_json::Error> for ToolError {
    fn from(e: serde_json::Error) -> Self {
        ToolError(e.to_string())
    }
}

pub type ToolResult = Result<ToolOutput, ToolError>;

/// How fresh the store is, carried by every answer so a model knows what "now" the data has.
#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct StoreState {
    /// When an index run last finished (UTC), if ever.
    pub last_indexed_at: Option<String>,
    /// What the server did about freshness before answering, when it did something.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl StoreState {
    /// Returns the line the readable text ends with.
    pub fn line(&self) -> String {
        let when = self.last_indexed_at.as_deref().unwrap_or("never");
        match &self.note {
            Some(n) => format!("Store last indexed: {when}. {n}"),
            None => format!("Store last indexed: {when}."),
        }
    }
}

/// Redacts every string inside `v`, keys included.
pub fn redact_value(v: &mut Value, redactor: &Redactor, counts: &mut RedactionCounts) {
    match v {
        Value::String(s) => {
            if let std::borrow::Cow::Owned(t) = redactor.redact(s, counts) {
                *s = t;
            }
        }
        Value::Array(items) => {
            for item in items {
                redact_value(item, redactor, counts);
            }
        }
        Value::Object(map) => {
            let keys_with_secrets: Vec<(String, String)> = map
                .keys()
                .filter_map(|k| match redactor.redact(k, counts) {
                    std::borrow::Cow::Owned(t) => Some((k.clone(), t)),
                    std::borrow::Cow::Borrowed(_) => None,
                })
                .collect();
            for (old, new) in keys_with_secrets {
                if let Some(value) = map.remove(&old) {
                    map.insert(new, value);
                }
            }
            for value in map.values_mut() {
                redact_value(value, redactor, counts);
            }
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

/// Returns the characters of `v` serialized as compact JSON (`serde_json::to_string`).
pub fn json_chars(v: &Value) -> usize {
    match v {
        Value::Null => 4,
        Value::Bool(b) => {
            if *b {
                4
            } else {
                5
            }
        }
        Value::Number(n) => n.to_string().len(),
        Value::String(s) => json_str_chars(s),
        Value::Array(items) => {
            2 + items.iter().map(json_chars).sum::<usize>() + items.len().saturating_sub(1)
        }
        Value::Object(map) => {
            2 + map
                .iter()
                .map(|(k, v)| json_str_chars(k) + 1 + json_chars(v))
                .sum::<usize>()
                + map.len().saturating_sub(1)
        }
    }
}

/// Returns the characters of `s` as a JSON string literal, quotes included: `"` and `\` and
/// the short control escapes take two, other control characters six (`\u001f`).
pub fn json_str_chars(s: &str) -> usize {
    2 + s
        .chars()
        .map(|c| match c {
            '"' | '\\' | '\n' | '\r' | '\t' | '\u{8}' | '\u{c}' => 2,
            c if (c as u32) < 0x20 => 6,
            _ => 1,
        })
        .sum::<usize>()
}

/// Returns the first `max` characters of `s` (all of it when shorter).
pub fn cut(s: &str, max: usize) -> &str {
    match s.char_indices().nth(max) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

/// Returns `s` on one line, cut to `max` characters with an ellipsis.
pub fn one_line(s: &str, max: usize) -> String {
    let flat: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() > max {
        format!("{}…", cut(&flat, max.saturating_sub(1)))
    } else {
        flat
    }
}

/// Words a model can act on for a query-layer failure.
pub(crate) fn query_error(e: QueryError) -> ToolError {
    match e.hint() {
        Some(hint) => {
            let hint = hint.replace(
                "run `trail index`",
                "call the index tool (or run `trail index`)",
            );
            ToolError(format!("{e}: {hint}"))
        }
        None => ToolError(e.to_string()),
    }
}

impl From<QueryError> for ToolError {
    fn from(e: QueryError) -> Self {
        query_error(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn json_chars_matches_serde_json() {
        let v = json!({
            "a": "x\"y\\z\n\u{1}é漢",
            "b": [1, -2.5, true, false, null, {"c": []}],
            "d\t": {},
        });
        let s = serde_json::to_string(&v).unwrap();
        assert_eq!(json_chars(&v), s.chars().count());
    }

    #[test]
    fn redaction_reaches_every_string_and_key() {
        let redactor = Redactor::new(&[]).unwrap();
        let key = "ghp_0123456789abcdefghijklmnopqrstuvwxyzAB";
        let mut out = ToolOutput {
            text: format!("token {key}"),
            structured: json!({"list": [format!("x {key}")], key: 1}),
        };
        out.redact(&redactor);
        let all = format!("{} {}", out.text, out.structured);
        assert!(!all.contains(key), "{all}");
        assert!(all.contains("[REDACTED:github-token]"));
        let before = out.chars();
        out.redact(&redactor);
        assert_eq!(out.chars(), before, "redacting twice changes nothing");
    }

    #[test]
    fn one_line_flattens_and_cuts() {
        assert_eq!(one_line("a\n  b", 10), "a b");
        assert_eq!(one_line("abcdefghij", 5), "abcd…");
    }
}
