//! Readers of the JSON shapes several chat formats share: content that is a string or a list of
//! typed blocks, tool arguments naming files, and token counts spelled several ways.

use std::collections::HashMap;

use serde_json::Value;

use trail_model::{MessageKind, Session, Usage};

use crate::json_fields::jcount;

/// The text of a content value: a string as it is, the `text` of each text block of a list
/// (joined by a blank line), or the `text` of a single block. Images become `[image]`.
pub(crate) fn content_text(v: Option<&Value>) -> String {
    match v {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(items)) => {
            let parts: Vec<String> = items.iter().filter_map(block_text).collect();
            parts.join("\n\n")
        }
        Some(obj @ Value::Object(_)) => block_text(obj).unwrap_or_default(),
        _ => String::new(),
    }
}

fn block_text(b: &Value) -> Option<String> {
    match b {
        Value::String(s) => Some(s.clone()),
        Value::Object(o) => match o.get("type").and_then(Value::as_str) {
            Some("text") | Some("input_text") | Some("output_text") | None => o
                .get("text")
                .and_then(Value::as_str)
                .filter(|t| !t.is_empty())
                .map(str::to_string),
            Some("image") | Some("image_url") => Some("[image]".to_string()),
            _ => None,
        },
        _ => None,
    }
}

/// The files a tool call's arguments name (`file_path`, `absolute_path`, `path`, `filePath`,
/// and the entries of `paths`).
pub(crate) fn arg_paths(args: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for k in ["file_path", "absolute_path", "path", "filePath"] {
        if let Some(p) = args.get(k).and_then(Value::as_str) {
            if !p.is_empty() {
                out.push(p.to_string());
                break;
            }
        }
    }
    if let Some(paths) = args.get("paths").and_then(Value::as_array) {
        out.extend(paths.iter().filter_map(Value::as_str).map(str::to_string));
    }
    out
}

/// The first count found under any of `keys` in `v` (0 when none is there).
pub(crate) fn count_of(v: &Value, keys: &[&str]) -> u64 {
    keys.iter()
        .find_map(|k| v.get(*k).filter(|x| x.is_number()))
        .map_or(0, |x| jcount(Some(x)))
}

/// Whether any of a record's token counts is above zero (a sum could overflow: the counts are
/// the file's, and the fuzz harness gives some near `u64::MAX`).
pub(crate) fn any_count<T: Copy + Default + PartialOrd>(counts: &[T]) -> bool {
    counts.iter().any(|&n| n > T::default())
}

/// Gemini's token counts (Gemini CLI's `tokens`, and the `usageMetadata` Qwen Code's records
/// carry): the prompt count includes the cached tokens and leaves out the tool-use prompt;
/// thoughts are output.
pub(crate) struct GeminiCounts {
    pub prompt: u64,
    pub cached: u64,
    pub candidates: u64,
    pub thoughts: u64,
    pub tool: u64,
    pub total: u64,
}

impl GeminiCounts {
    /// `usage` with its token fields set from these counts (saturating: the counts are the
    /// file's, and a corrupt one can be near `u64::MAX`).
    pub(crate) fn apply(&self, usage: Usage) -> Usage {
        let cached = self.cached.min(self.prompt);
        Usage {
            input_tokens: (self.prompt - cached).saturating_add(self.tool),
            output_tokens: self.candidates.saturating_add(self.thoughts),
            cache_read_tokens: cached,
            reasoning_tokens: self.thoughts,
            tokens_known: any_count(&[
                self.prompt,
                self.candidates,
                self.thoughts,
                self.tool,
                self.total,
            ]),
            ..usage
        }
    }
}

/// Returns a one-line title from a prompt: its first non-blank line, at most `max` characters.
pub(crate) fn title_from(text: &str, max: usize) -> Option<String> {
    let line = text.lines().map(str::trim).find(|l| !l.is_empty())?;
    Some(trail_model::truncate_chars(line, max).to_string())
}

/// One message of Claude-style content blocks (`text`, `thinking`, `tool_use`, `tool_result`),
/// as Factory Droid and iFlow write them.
pub(crate) struct ClaudeBlock {
    pub kind: MessageKind,
    pub text: String,
    pub tool_name: Option<String>,
    pub tool_call_id: Option<String>,
    pub tool_input: Option<Value>,
    pub tool_output: Option<String>,
    pub is_error: bool,
}

/// Splits Claude-style content into messages: a string is one text; `tool_result` blocks are
/// results (an error when `is_error`, or when the output starts with `Error:`); text and
/// thinking blocks that are empty are dropped. `text_kind` is the kind of text blocks
/// (a prompt for a user's message, an answer for the assistant's).
pub(crate) fn claude_blocks(content: Option<&Value>, text_kind: MessageKind) -> Vec<ClaudeBlock> {
    let block = |kind: MessageKind, text: String| ClaudeBlock {
        kind,
        text,
        tool_name: None,
        tool_call_id: None,
        tool_input: None,
        tool_output: None,
        is_error: false,
    };
    let items = match content {
        Some(Value::String(s)) if !s.trim().is_empty() => return vec![block(text_kind, s.clone())],
        Some(Value::Array(items)) => items,
        _ => return Vec::new(),
    };
    let mut out = Vec::new();
    for b in items {
        match b.get("type").and_then(Value::as_str).unwrap_or_default() {
            "text" => {
                let t = b.get("text").and_then(Value::as_str).unwrap_or_default();
                if !t.trim().is_empty() {
                    out.push(block(text_kind, t.to_string()));
                }
            }
            "thinking" => {
                let t = b
                    .get("thinking")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                if !t.trim().is_empty() {
                    out.push(block(MessageKind::Thinking, t.to_string()));
                }
            }
            "tool_use" => out.push(ClaudeBlock {
                tool_name: b.get("name").and_then(Value::as_str).map(str::to_string),
                tool_call_id: b.get("id").and_then(Value::as_str).map(str::to_string),
                tool_input: Some(b.get("input").cloned().unwrap_or(Value::Null)),
                ..block(MessageKind::ToolCall, String::new())
            }),
            "tool_result" => {
                let output = tool_result_text(b.get("content"));
                let is_error = b.get("is_error").and_then(Value::as_bool) == Some(true)
                    || output.trim_start().starts_with("Error:");
                out.push(ClaudeBlock {
                    tool_call_id: b
                        .get("tool_use_id")
                        .and_then(Value::as_str)
                        .map(str::to_string),
                    tool_output: Some(output),
                    is_error,
                    ..block(MessageKind::ToolResult, String::new())
                });
            }
            "image" => out.push(block(text_kind, "[image]".into())),
            _ => {}
        }
    }
    out
}

/// A tool result's content: a string, text blocks, or (iFlow) an object whose
/// `responseParts.functionResponse.response` holds the `output`.
fn tool_result_text(v: Option<&Value>) -> String {
    match v {
        Some(o @ Value::Object(_)) => {
            let resp = o.pointer("/responseParts/functionResponse/response");
            match resp.and_then(|r| r.get("output").or_else(|| r.get("error"))) {
                Some(Value::String(s)) => s.clone(),
                Some(other) => other.to_string(),
                None => o
                    .get("resultDisplay")
                    .and_then(Value::as_str)
                    .map_or_else(|| o.to_string(), str::to_string),
            }
        }
        other => content_text(other),
    }
}

/// Tool results name no tool: take it from their call.
pub(crate) fn fill_tool_names(session: &mut Session) {
    let names: HashMap<String, String> = session
        .messages
        .iter()
        .filter(|m| m.kind == Some(MessageKind::ToolCall))
        .filter_map(|m| Some((m.tool_call_id.clone()?, m.tool_name.clone()?)))
        .collect();
    for m in &mut session.messages {
        if m.kind == Some(MessageKind::ToolResult) && m.tool_name.is_none() {
            m.tool_name = m.tool_call_id.as_ref().and_then(|c| names.get(c).cloned());
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn content_of_every_shape() {
        assert_eq!(content_text(Some(&json!("hi"))), "hi");
        let blocks = json!([{"type": "text", "text": "a"}, {"type": "image"}, {"type": "x"}]);
        assert_eq!(content_text(Some(&blocks)), "a\n\n[image]");
        assert_eq!(content_text(None), "");
    }

    #[test]
    fn counts_and_paths() {
        let v = json!({"input_tokens": 3, "input": 5});
        assert_eq!(count_of(&v, &["input", "input_tokens"]), 5);
        assert_eq!(count_of(&v, &["nope"]), 0);
        let a = json!({"path": "a.rs", "paths": ["b.rs"]});
        assert_eq!(arg_paths(&a), ["a.rs", "b.rs"]);
        assert_eq!(title_from("\n  first \nsecond", 3).as_deref(), Some("fir"));
    }
}
