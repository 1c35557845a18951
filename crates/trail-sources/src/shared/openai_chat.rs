//! OpenAI-style chat messages (`{role, content, reasoning_content, tool_calls, tool_call_id,
//! name}`), as Mistral Vibe and Hermes Agent record them: one record becomes its thinking,
//! its text and one message per tool call; a `tool` record becomes a tool result.

use std::collections::HashMap;

use serde_json::Value;
use trail_model::{FileTouch, Message, MessageKind, Role, Session};

use crate::json_fields::value_text;
use crate::refs;

/// Keys a file tool names its path with.
const PATH_KEYS: &[&str] = &[
    "file_path",
    "path",
    "absolute_path",
    "filePath",
    "target_file",
    // Antigravity's file tools.
    "AbsolutePath",
    "TargetFile",
    // Visual Studio Copilot's `get_file`.
    "filename",
];

/// The readable text of a `content`: a string, or the text of a list of parts.
pub(crate) fn content_text(v: Option<&Value>) -> String {
    match v {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => {
            let texts: Vec<&str> = parts
                .iter()
                .filter_map(|p| match p {
                    Value::String(s) => Some(s.as_str()),
                    other => other.get("text").and_then(Value::as_str),
                })
                .filter(|t| !t.is_empty())
                .collect();
            texts.join("\n")
        }
        Some(Value::Object(o)) => o
            .get("text")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
        _ => String::new(),
    }
}

/// Turns OpenAI-style records into messages, remembering each tool call's name so its result
/// can carry it.
#[derive(Default)]
pub(crate) struct ChatReader {
    /// Tool call id -> tool name.
    pub tool_names: HashMap<String, String>,
}

impl ChatReader {
    /// The messages of an `assistant` record: thinking, text, then each tool call.
    /// `reasoning_keys` name the fields holding its reasoning text.
    pub fn assistant(&mut self, rec: &Value, reasoning_keys: &[&str]) -> Vec<Message> {
        let mut out = Vec::new();
        let reasoning = reasoning_keys
            .iter()
            .map(|k| content_text(rec.get(*k)))
            .find(|t| !t.trim().is_empty());
        if let Some(text) = reasoning {
            out.push(Message::new(Role::Assistant, MessageKind::Thinking, text));
        }
        let text = content_text(rec.get("content"));
        if !text.trim().is_empty() {
            out.push(Message::new(Role::Assistant, MessageKind::Text, text));
        }
        let calls = rec.get("tool_calls").and_then(Value::as_array);
        for call in calls.into_iter().flatten() {
            out.push(self.tool_call(call));
        }
        out
    }

    fn tool_call(&mut self, call: &Value) -> Message {
        let function = call.get("function").unwrap_or(call);
        let name = function
            .get("name")
            .and_then(Value::as_str)
            .filter(|n| !n.is_empty())
            .unwrap_or("unknown")
            .to_string();
        let id = call.get("id").and_then(Value::as_str).map(str::to_string);
        if let Some(id) = &id {
            self.tool_names.insert(id.clone(), name.clone());
        }
        let input = match function.get("arguments") {
            // Arguments are JSON text; keep them as written.
            Some(Value::String(s)) => s.clone(),
            Some(Value::Null) | None => String::new(),
            Some(other) => other.to_string(),
        };
        let mut m = Message::new(Role::Assistant, MessageKind::ToolCall, String::new());
        m.tool_name = Some(name);
        m.tool_call_id = id;
        m.tool_input = Some(input);
        m
    }

    /// The result message of a `tool` record; `is_error` says whether its text reports a
    /// failure.
    pub fn tool_result(&self, rec: &Value, is_error: impl Fn(&str) -> bool) -> Message {
        let id = rec
            .get("tool_call_id")
            .and_then(Value::as_str)
            .map(str::to_string);
        let name = rec
            .get("name")
            .and_then(Value::as_str)
            .map(str::to_string)
            .or_else(|| id.as_ref().and_then(|i| self.tool_names.get(i).cloned()));
        let output = match rec.get("content") {
            Some(Value::Null) | None => String::new(),
            Some(c @ (Value::String(_) | Value::Array(_))) => content_text(Some(c)),
            Some(other) => value_text(other),
        };
        let mut m = Message::new(Role::Tool, MessageKind::ToolResult, String::new());
        m.is_error = is_error(&output);
        m.tool_name = name;
        m.tool_call_id = id;
        m.tool_output = Some(output);
        m
    }
}

/// A message with a role, a kind and a text.
/// The path a tool call's input names, if it names one.
pub(crate) fn input_path(input: &str) -> Option<String> {
    let v: Value = serde_json::from_str(input).ok()?;
    PATH_KEYS
        .iter()
        .find_map(|k| v.get(*k).and_then(Value::as_str))
        .filter(|p| !p.is_empty())
        .map(str::to_string)
}

/// Adds the files tool calls name and the refs the text mentions, once turns are assigned.
/// The results of `shell_tools` are scanned for git's commit lines.
pub(crate) fn derive_files_and_refs(session: &mut Session, shell_tools: &[&str]) {
    let mut touches = Vec::new();
    let mut found = Vec::new();
    for m in session.messages.iter().filter(|m| m.on_main_chain) {
        let ts = m.timestamp.as_deref();
        let (text, git) = match m.kind() {
            MessageKind::Prompt | MessageKind::Text => (Some(m.text.as_str()), false),
            MessageKind::ToolCall => {
                if let Some(path) = m.tool_input.as_deref().and_then(input_path) {
                    touches.push(FileTouch {
                        path,
                        tool_name: m.tool_name.clone(),
                        turn_index: m.turn_index,
                        first_seen_at: m.timestamp.clone(),
                    });
                }
                (m.tool_input.as_deref(), false)
            }
            MessageKind::ToolResult => {
                let shell = m
                    .tool_name
                    .as_deref()
                    .is_some_and(|t| shell_tools.contains(&t));
                (m.tool_output.as_deref().filter(|_| shell), true)
            }
            _ => (None, false),
        };
        if let Some(text) = text {
            found.extend(refs::session_refs(text, git, m.turn_index, ts));
        }
    }
    for t in touches {
        session.add_file(t);
    }
    for r in found {
        session.add_ref(r);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn assistant_record_splits_into_thinking_text_and_calls() {
        let mut r = ChatReader::default();
        let rec = serde_json::json!({
            "role": "assistant", "content": "ok", "reasoning_content": "why",
            "tool_calls": [{"id": "c1", "function": {"name": "bash", "arguments": "{\"command\":\"ls\"}"}}]
        });
        let ms = r.assistant(&rec, &["reasoning_content"]);
        let kinds: Vec<_> = ms.iter().map(Message::kind).collect();
        assert_eq!(
            kinds,
            [
                MessageKind::Thinking,
                MessageKind::Text,
                MessageKind::ToolCall
            ]
        );
        assert_eq!(ms[2].tool_input.as_deref(), Some("{\"command\":\"ls\"}"));
        let res = r.tool_result(
            &serde_json::json!({"role": "tool", "tool_call_id": "c1", "content": "x"}),
            |_| false,
        );
        assert_eq!(res.tool_name.as_deref(), Some("bash"));
    }

    #[test]
    fn content_parts_are_joined() {
        let v = serde_json::json!([{"type": "text", "text": "a"}, {"type": "image_url"}, "b"]);
        assert_eq!(content_text(Some(&v)), "a\nb");
        assert_eq!(input_path("{\"path\": \"x.rs\"}").as_deref(), Some("x.rs"));
    }
}
