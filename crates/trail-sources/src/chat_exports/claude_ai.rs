//! A Claude.ai data export's `conversations.json` (Settings → Privacy → Export data). The
//! `projects.json` and `users.json` beside it hold no conversation and are not read (nor
//! detected).
//!
//! # Format
//! A JSON array of conversations, each `{uuid, name, created_at, updated_at (ISO text),
//! chat_messages}`; each message `{uuid, sender: human|assistant, text, content, created_at,
//! attachments: [{file_name, extracted_content}], files: [{file_name}]}`, and where the
//! conversation was fetched with its branches, `parent_message_uuid` on each message and
//! `current_leaf_message_uuid` on the conversation. `content` is a list of blocks: `text`,
//! `thinking` (`thinking`), `tool_use` (`name`, `input`, `id`), `tool_result` (`name`,
//! `content`, `is_error`, `tool_use_id`), and others (`voice_note`, `token_budget`...).
//!
//! # Mapping
//! - A human message is one prompt (its text blocks joined, else `text`), its other blocks,
//!   attachments and files after it (other blocks `unknown`, attachments and files meta). An assistant message gives its blocks in order: answer text,
//!   thinking, tool calls and results (a result without `tool_use_id` answers the last
//!   unanswered call of its name). Other block types are `unknown` messages holding the block.
//! - With `current_leaf_message_uuid`, the path from it to the root is the conversation and
//!   other branches are kept off the main chain; without it, messages are in file order.
//! - No token counts: the export records none.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::Value;
use trail_model::{
    time, Message, MessageKind, Origin, Role, Session, SessionMeta, SourceKind, TitleRank,
};

use super::{chat_metadata, discover_exports, head_has, parse_export, parse_export_each, text_of};
use crate::chat_tree::finish_tree_session;
use crate::ids;
use crate::json_fields::{jstr, value_text};
use crate::linear::push_message;
use crate::{FileParse, ParseRequest, Source, SourceError};

/// Version of this parser, stored with every file it read (see `Source::parser_version`).
pub const PARSER_VERSION: u32 = 1;

/// The parent Claude.ai gives a conversation's first message.
const ROOT_PARENT: &str = "00000000-0000-4000-8000-000000000000";

/// A Claude.ai export's `conversations.json`.
pub struct ClaudeAiExport;

impl Source for ClaudeAiExport {
    fn kind(&self) -> SourceKind {
        SourceKind::ClaudeAiExport
    }

    fn parser_version(&self) -> u32 {
        PARSER_VERSION
    }

    /// Only under roots given explicitly (`--root claude-ai-export=PATH`): no default location.
    fn discover(&self, roots: &[PathBuf]) -> Vec<PathBuf> {
        discover_exports(roots, |p, h| self.detect(p, h))
    }

    /// A `.json` file opening an array whose head has a conversation's `chat_messages`.
    fn detect(&self, path: &Path, head: &[u8]) -> bool {
        head_has(path, head, &[b"\"chat_messages\"", b"\"uuid\""])
    }

    fn appendable(&self, _path: &Path) -> bool {
        false
    }

    fn parse(&self, request: ParseRequest<'_>) -> Result<FileParse, SourceError> {
        parse_export(request.path, conversation)
    }

    fn streams_sessions(&self) -> bool {
        true
    }

    fn parse_each(
        &self,
        request: ParseRequest<'_>,
        each: &mut dyn FnMut(Session, u64) -> bool,
    ) -> Result<FileParse, SourceError> {
        parse_export_each(request.path, conversation, each)
    }
}

/// One conversation as a session (see the module).
fn conversation(conv: &Value) -> Result<Option<Session>, String> {
    if !conv.is_object() {
        return Err("not a JSON object".into());
    }
    let native = jstr(conv, "uuid")
        .filter(|s| !s.is_empty())
        .ok_or("no `uuid`")?;
    let messages = conv
        .get("chat_messages")
        .and_then(Value::as_array)
        .ok_or("no `chat_messages` list")?;
    if let Some(i) = messages.iter().position(|m| !m.is_object()) {
        return Err(format!("message {} is not a JSON object", i + 1));
    }
    if messages.is_empty() {
        return Ok(None);
    }
    let mut session = Session::new(session_meta(conv, native));
    let model = jstr(conv, "model").filter(|m| !m.is_empty());
    if let Some(m) = model {
        session.observe_model(m);
    }
    let mut calls = Calls::default();
    for (i, msg) in messages.iter().enumerate() {
        for mut m in messages_of(msg, i, &mut calls) {
            if m.role == Some(Role::Assistant) {
                m.model = model.map(str::to_string);
            }
            push_message(&mut session, m);
        }
    }
    // A leaf names the conversation only where messages name their parents.
    let tree = messages
        .iter()
        .any(|m| jstr(m, "parent_message_uuid").is_some());
    let leaf = jstr(conv, "current_leaf_message_uuid").filter(|l| tree && *l != ROOT_PARENT);
    finish_tree_session(&mut session, leaf, Vec::new(), &[]);
    Ok(Some(session))
}

fn session_meta(conv: &Value, native: &str) -> SessionMeta {
    let kind = SourceKind::ClaudeAiExport;
    let mut meta = SessionMeta::new(ids::session_id(kind, native), kind, native);
    if let Some(t) = jstr(conv, "name").map(str::trim).filter(|t| !t.is_empty()) {
        meta.title = Some(t.to_string());
        meta.title_rank = TitleRank::SUMMARY;
    }
    for key in ["created_at", "updated_at"] {
        if let Some(ts) = conv.get(key).and_then(time::from_json) {
            meta.observe_timestamp(&ts);
        }
    }
    meta.metadata = Some(chat_metadata("claude.ai"));
    meta
}

/// Tool calls not yet answered, by tool name, to pair results that name no call.
#[derive(Default)]
struct Calls {
    open: HashMap<String, Vec<String>>,
}

impl Calls {
    fn opened(&mut self, name: &str, id: &str) {
        self.open
            .entry(name.to_string())
            .or_default()
            .push(id.to_string());
    }

    /// The call a result answers: its `tool_use_id`, else the last open call of its name.
    fn answered(&mut self, name: &str, id: Option<&str>) -> Option<String> {
        let open = self.open.entry(name.to_string()).or_default();
        match id {
            Some(id) => {
                open.retain(|c| c != id);
                Some(id.to_string())
            }
            None => open.pop(),
        }
    }
}

/// The messages of one chat message (the `i`-th).
fn messages_of(msg: &Value, i: usize, calls: &mut Calls) -> Vec<Message> {
    let uuid = jstr(msg, "uuid")
        .map(str::to_string)
        .unwrap_or_else(|| format!("message-{}", i + 1));
    let base = Origin {
        native_id: Some(uuid.clone()),
        parent_native_id: jstr(msg, "parent_message_uuid")
            .filter(|p| *p != ROOT_PARENT && !p.is_empty())
            .map(str::to_string),
        timestamp: msg.get("created_at").and_then(time::from_json),
        ..Origin::default()
    };
    let blocks: &[Value] = msg
        .get("content")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice);
    match jstr(msg, "sender") {
        Some("human") => human(msg, blocks, base),
        Some("assistant") => assistant(msg, blocks, &uuid, base, calls),
        _ => vec![base
            .message(
                Role::System,
                MessageKind::Unknown,
                jstr(msg, "text").unwrap_or(""),
            )
            .with_extra(msg.to_string())],
    }
}

/// A human message: the prompt, then its attachments and files.
fn human(msg: &Value, blocks: &[Value], base: Origin) -> Vec<Message> {
    let joined = blocks
        .iter()
        .filter(|b| jstr(b, "type") == Some("text"))
        .filter_map(|b| jstr(b, "text"))
        .collect::<Vec<_>>()
        .join("\n\n");
    let text = if joined.trim().is_empty() {
        jstr(msg, "text").unwrap_or("").to_string()
    } else {
        joined
    };
    let mut out = vec![base.message(Role::User, MessageKind::Prompt, text)];
    let meta = |text: String| base.message(Role::User, MessageKind::Meta, text);
    // Blocks other than text (a voice note...) are kept as they are.
    for b in blocks.iter().filter(|b| jstr(b, "type") != Some("text")) {
        let text = b.get("text").map(value_text).unwrap_or_default();
        out.push(
            base.message(Role::User, MessageKind::Unknown, text)
                .with_extra(b.to_string()),
        );
    }
    for a in list(msg, "attachments") {
        let name = jstr(a, "file_name").unwrap_or("attachment");
        let body = jstr(a, "extracted_content").unwrap_or("");
        out.push(meta(format!("[attachment: {name}]\n{body}")));
    }
    for f in list(msg, "files") {
        let name = jstr(f, "file_name").unwrap_or("file");
        out.push(meta(format!("[file: {name}]")));
    }
    out
}

fn list<'a>(v: &'a Value, key: &str) -> &'a [Value] {
    v.get(key)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// An assistant message: its blocks in order (its `text` when it has no block).
fn assistant(
    msg: &Value,
    blocks: &[Value],
    uuid: &str,
    base: Origin,
    calls: &mut Calls,
) -> Vec<Message> {
    let mut out: Vec<Message> = blocks
        .iter()
        .enumerate()
        .filter_map(|(k, b)| block(b, &format!("{uuid}#{k}"), &base, calls))
        .collect();
    if out.is_empty() {
        let text = jstr(msg, "text").unwrap_or("");
        if !text.trim().is_empty() {
            out.push(base.message(Role::Assistant, MessageKind::Text, text));
        }
    }
    out
}

/// One content block of an assistant message, or `None` when it is empty.
fn block(b: &Value, fallback_id: &str, base: &Origin, calls: &mut Calls) -> Option<Message> {
    let mut base = base.clone();
    if let Some(ts) = b.get("start_timestamp").and_then(time::from_json) {
        base.timestamp = Some(ts);
    }
    let m = match jstr(b, "type") {
        Some("text") => base.message(
            Role::Assistant,
            MessageKind::Text,
            jstr(b, "text").unwrap_or(""),
        ),
        Some("thinking") => base.message(
            Role::Assistant,
            MessageKind::Thinking,
            jstr(b, "thinking").unwrap_or(""),
        ),
        Some("tool_use") => {
            let name = jstr(b, "name").unwrap_or("tool");
            let id = jstr(b, "id").unwrap_or(fallback_id);
            calls.opened(name, id);
            let input = b.get("input").map_or_else(String::new, Value::to_string);
            let call = base
                .message(Role::Assistant, MessageKind::ToolCall, "")
                .with_tool_name(name.to_string())
                .with_call_id(id.to_string())
                .with_input(input);
            return Some(call);
        }
        Some("tool_result") => {
            let name = jstr(b, "name").unwrap_or("tool");
            let result = base
                .message(Role::Tool, MessageKind::ToolResult, "")
                .with_tool_name(name.to_string())
                .with_call_id(calls.answered(name, jstr(b, "tool_use_id")))
                .with_output(b.get("content").map(text_of).unwrap_or_default())
                .with_error(b.get("is_error") == Some(&Value::Bool(true)));
            return Some(result);
        }
        _ => {
            let text = b.get("text").map(value_text).unwrap_or_default();
            let other = base
                .message(Role::Assistant, MessageKind::Unknown, text)
                .with_extra(b.to_string());
            return Some(other);
        }
    };
    (!m.text.trim().is_empty()).then_some(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_result_without_an_id_answers_the_last_open_call_of_its_name() {
        let conv = serde_json::json!({
            "uuid": "c", "name": "n", "chat_messages": [
                {"uuid": "m1", "sender": "human", "text": "look it up", "content": []},
                {"uuid": "m2", "sender": "assistant", "text": "", "content": [
                    {"type": "tool_use", "name": "web_search", "input": {"query": "q"}},
                    {"type": "tool_result", "name": "web_search", "content": [{"type": "text", "text": "r"}]},
                    {"type": "token_budget"},
                    {"type": "text", "text": "found"}
                ]}
            ]
        });
        let s = conversation(&conv).unwrap().unwrap();
        let kinds: Vec<MessageKind> = s.messages.iter().map(Message::kind).collect();
        assert_eq!(
            kinds,
            [
                MessageKind::Prompt,
                MessageKind::ToolCall,
                MessageKind::ToolResult,
                MessageKind::Unknown,
                MessageKind::Text
            ]
        );
        assert_eq!(s.messages[2].tool_call_id.as_deref(), Some("m2#0"));
        assert_eq!(s.messages[2].tool_output.as_deref(), Some("r"));
        assert_eq!(s.turn_count, 1);
    }

    #[test]
    fn not_a_conversation_is_a_reason() {
        assert!(conversation(&serde_json::json!({"uuid": "c"})).is_err());
        assert!(conversation(&serde_json::json!({"uuid": "c", "chat_messages": [1]})).is_err());
        let empty = serde_json::json!({"uuid": "c", "chat_messages": []});
        assert!(conversation(&empty).unwrap().is_none());
    }
}
