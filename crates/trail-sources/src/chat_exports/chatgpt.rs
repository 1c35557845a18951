//! A ChatGPT data export's `conversations.json` (Settings → Data controls → Export data; the
//! zip also holds `chat.html`, `user.json`, `message_feedback.json`... which are not read).
//!
//! # Format
//! A JSON array of conversations, each `{id, conversation_id, title, create_time, update_time
//! (Unix seconds, floats, may be null), current_node, default_model_slug, mapping}`. `mapping`
//! is a tree: node id → `{id, parent, children, message}`; `message` is null on the root and
//! else `{id, author: {role: system|user|assistant|tool, name}, create_time, content:
//! {content_type, ...}, recipient, metadata: {model_slug, is_visually_hidden_from_conversation,
//! aggregate_result}}`. Editing a prompt or regenerating an answer adds a sibling branch; the
//! conversation shown is the path from `current_node` up to the root.
//!
//! # Mapping
//! - Every node with a message is kept, branches included, in depth-first order from the root;
//!   the path from `current_node` is the main chain (turns), other branches are forks kept off
//!   it ([`crate::chat_tree`]). Nodes without a message (or with an empty one) are skipped and
//!   their children hang from the nearest kept ancestor.
//! - `content_type`: `text` and `multimodal_text` (`parts`: strings, and objects such as image
//!   pointers, named `[image_asset_pointer]`), `code`, `execution_output`, `thoughts`
//!   (thinking), `reasoning_recap`, `tether_browsing_display`, `tether_quote`,
//!   `user_editable_context` (custom instructions: meta), `system_error` (error). Any other
//!   content type is an `unknown` message holding the content as JSON.
//! - A user message is a prompt (hidden ones are meta); an assistant message addressed to a
//!   tool (`recipient` other than `all`) is a tool call named by the recipient; a `tool`
//!   message is that call's result (`author.name`), its error when the kernel failed.
//! - No token counts: the export records none.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};
use trail_model::{
    time, Message, MessageKind, Origin, Role, Session, SessionMeta, SourceKind, TitleRank,
};

use super::{chat_metadata, discover_exports, head_has, parse_export, parse_export_each, text_of};
use crate::chat_tree::finish_tree_session;
use crate::ids;
use crate::json_fields::jstr;
use crate::linear::push_message;
use crate::{FileParse, ParseRequest, Source, SourceError};

/// Version of this parser, stored with every file it read (see `Source::parser_version`).
pub const PARSER_VERSION: u32 = 1;

/// The content types this parser reads; others are `unknown` messages.
const KNOWN: &[&str] = &[
    "text",
    "multimodal_text",
    "code",
    "execution_output",
    "thoughts",
    "reasoning_recap",
    "tether_browsing_display",
    "tether_quote",
    "user_editable_context",
    "system_error",
];

/// A ChatGPT export's `conversations.json`.
pub struct ChatgptExport;

impl Source for ChatgptExport {
    fn kind(&self) -> SourceKind {
        SourceKind::ChatgptExport
    }

    fn parser_version(&self) -> u32 {
        PARSER_VERSION
    }

    /// Only under roots given explicitly (`--root chatgpt-export=PATH`): no default location.
    fn discover(&self, roots: &[PathBuf]) -> Vec<PathBuf> {
        discover_exports(roots, |p, h| self.detect(p, h))
    }

    /// A `.json` file opening an array whose head has a conversation's `mapping` of messages.
    fn detect(&self, path: &Path, head: &[u8]) -> bool {
        head_has(
            path,
            head,
            &[b"\"mapping\"", b"\"author\"", b"\"content_type\""],
        )
    }

    /// An export is written once; a new one is a new file or a rewrite.
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
    let mapping = conv
        .get("mapping")
        .and_then(Value::as_object)
        .ok_or("no `mapping` object")?;
    let native = jstr(conv, "conversation_id")
        .or_else(|| jstr(conv, "id"))
        .filter(|s| !s.is_empty())
        .ok_or("no `id`")?;
    let mut session = Session::new(session_meta(conv, native));
    let default_model = jstr(conv, "default_model_slug");
    let mut kept: HashSet<&str> = HashSet::new();
    let mut calls: HashSet<&str> = HashSet::new();
    for id in node_order(mapping) {
        let Some(msg) = mapping[id].get("message").filter(|m| m.is_object()) else {
            continue;
        };
        let parent = nearest_kept(mapping, parent_of(mapping, id), &kept);
        let node = Node {
            id,
            parent,
            parent_is_call: parent.is_some_and(|p| calls.contains(p)),
        };
        let Some(mut m) = message_of(msg, &node) else {
            continue;
        };
        if m.role == Some(Role::Assistant) {
            m.model = jstr(msg.get("metadata").unwrap_or(&Value::Null), "model_slug")
                .or(default_model)
                .map(str::to_string);
        }
        if let Some(model) = m.model.clone() {
            session.observe_model(&model);
        }
        if m.kind == Some(MessageKind::ToolCall) {
            calls.insert(id);
        }
        kept.insert(id);
        push_message(&mut session, m);
    }
    if session.messages.is_empty() {
        return Ok(None);
    }
    let leaf = nearest_kept(mapping, jstr(conv, "current_node"), &kept);
    finish_tree_session(&mut session, leaf, Vec::new(), &[]);
    Ok(Some(session))
}

fn session_meta(conv: &Value, native: &str) -> SessionMeta {
    let kind = SourceKind::ChatgptExport;
    let mut meta = SessionMeta::new(ids::session_id(kind, native), kind, native);
    if let Some(t) = jstr(conv, "title").map(str::trim).filter(|t| !t.is_empty()) {
        meta.title = Some(t.to_string());
        meta.title_rank = TitleRank::SUMMARY;
    }
    for key in ["create_time", "update_time"] {
        if let Some(ts) = conv.get(key).and_then(time::from_json) {
            meta.observe_timestamp(&ts);
        }
    }
    meta.metadata = Some(chat_metadata("chatgpt"));
    meta
}

/// The node ids, depth first from each root (a node whose parent is absent), children in
/// their listed order; nodes no root reaches (a parent loop) follow in mapping order.
fn node_order(mapping: &Map<String, Value>) -> Vec<&str> {
    let mut order = Vec::with_capacity(mapping.len());
    let mut seen: HashSet<&str> = HashSet::new();
    let roots = mapping
        .keys()
        .filter(|id| parent_of(mapping, id).is_none_or(|p| !mapping.contains_key(p)));
    // Roots first, then every node (those no root reached start their own walk).
    let starts: Vec<&str> = roots.chain(mapping.keys()).map(String::as_str).collect();
    for start in starts {
        let mut stack = vec![start];
        while let Some(id) = stack.pop() {
            if !seen.insert(id) {
                continue;
            }
            order.push(id);
            stack.extend(children_of(mapping, id).into_iter().rev());
        }
    }
    order
}

fn parent_of<'a>(mapping: &'a Map<String, Value>, id: &str) -> Option<&'a str> {
    mapping.get(id)?.get("parent")?.as_str()
}

fn children_of<'a>(mapping: &'a Map<String, Value>, id: &str) -> Vec<&'a str> {
    mapping
        .get(id)
        .and_then(|n| n.get("children"))
        .and_then(Value::as_array)
        .map(|c| {
            c.iter()
                .filter_map(Value::as_str)
                .filter(|c| mapping.contains_key(*c))
                .collect()
        })
        .unwrap_or_default()
}

/// `id` or its nearest ancestor that gave a message (a loop of parents gives none).
fn nearest_kept<'a>(
    mapping: &'a Map<String, Value>,
    id: Option<&'a str>,
    kept: &HashSet<&str>,
) -> Option<&'a str> {
    let mut at = id;
    let mut steps = 0;
    while let Some(id) = at {
        if kept.contains(id) {
            return Some(id);
        }
        steps += 1;
        if steps > mapping.len() {
            return None;
        }
        at = parent_of(mapping, id);
    }
    None
}

/// Where a message sits in the tree.
struct Node<'a> {
    id: &'a str,
    /// The nearest ancestor that gave a message.
    parent: Option<&'a str>,
    /// That ancestor is a tool call (a tool message answers it).
    parent_is_call: bool,
}

/// The message of one node, or `None` when it says nothing.
fn message_of(msg: &Value, node: &Node<'_>) -> Option<Message> {
    let role = msg.pointer("/author/role").and_then(Value::as_str);
    let content = msg.get("content").unwrap_or(&Value::Null);
    let content_type = jstr(content, "content_type").unwrap_or("");
    let text = body_text(content, content_type);
    let base = Origin {
        native_id: Some(node.id.to_string()),
        parent_native_id: node.parent.map(str::to_string),
        timestamp: msg.get("create_time").and_then(time::from_json),
        ..Origin::default()
    };
    let author = match role {
        Some("user") => Role::User,
        Some("assistant") => Role::Assistant,
        Some("tool") => Role::Tool,
        _ => Role::System,
    };
    if !KNOWN.contains(&content_type) {
        let m = base.message(author, MessageKind::Unknown, text);
        return Some(m.with_extra(content.to_string()));
    }
    let kind = kind_of(msg, role, content_type);
    let mut m = base.message(author, kind, "");
    match kind {
        MessageKind::ToolCall => {
            let recipient = jstr(msg, "recipient").unwrap_or("tool");
            m.tool_name = Some(recipient.to_string());
            m.tool_call_id = Some(node.id.to_string());
            m.tool_input = Some(tool_input(content, &text));
        }
        MessageKind::ToolResult => {
            m.tool_name = msg
                .pointer("/author/name")
                .and_then(Value::as_str)
                .map(str::to_string);
            m.tool_call_id = node
                .parent
                .filter(|_| node.parent_is_call)
                .map(str::to_string);
            m.is_error = content_type == "system_error" || kernel_failed(msg);
            m.tool_output = Some(text);
            return Some(m);
        }
        _ if text.trim().is_empty() => return None,
        _ => m.text = text,
    }
    Some(m)
}

/// What a message of a known content type is.
fn kind_of(msg: &Value, role: Option<&str>, content_type: &str) -> MessageKind {
    let hidden =
        msg.pointer("/metadata/is_visually_hidden_from_conversation") == Some(&Value::Bool(true));
    let to_tool = jstr(msg, "recipient").is_some_and(|r| r != "all");
    match (role, content_type) {
        (Some("tool"), _) => MessageKind::ToolResult,
        (_, "system_error") => MessageKind::Error,
        (_, "user_editable_context") => MessageKind::Meta,
        (Some("user"), _) if hidden => MessageKind::Meta,
        (Some("user"), _) => MessageKind::Prompt,
        (Some("assistant"), "thoughts") => MessageKind::Thinking,
        (Some("assistant"), "reasoning_recap") => MessageKind::Meta,
        (Some("assistant"), _) if to_tool => MessageKind::ToolCall,
        (Some("assistant"), _) => MessageKind::Text,
        _ => MessageKind::Meta,
    }
}

/// The readable text of a content object of type `content_type`.
fn body_text(content: &Value, content_type: &str) -> String {
    let field = |k: &str| jstr(content, k).unwrap_or("").to_string();
    match content_type {
        "text" | "multimodal_text" => content.get("parts").map(text_of).unwrap_or_default(),
        "thoughts" => content
            .get("thoughts")
            .and_then(Value::as_array)
            .map(|ts| {
                ts.iter()
                    .map(|t| {
                        let summary = jstr(t, "summary").unwrap_or("");
                        let body = jstr(t, "content").unwrap_or("");
                        [summary, body]
                            .into_iter()
                            .filter(|s| !s.is_empty())
                            .collect::<Vec<_>>()
                            .join("\n")
                    })
                    .collect::<Vec<_>>()
                    .join("\n\n")
            })
            .unwrap_or_default(),
        "reasoning_recap" => field("content"),
        "tether_browsing_display" => {
            let result = field("result");
            if result.is_empty() {
                field("summary")
            } else {
                result
            }
        }
        "tether_quote" => [field("title"), field("url"), field("text")]
            .into_iter()
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>()
            .join("\n"),
        "user_editable_context" => [field("user_profile"), field("user_instructions")]
            .into_iter()
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>()
            .join("\n\n"),
        "system_error" => {
            let name = field("name");
            let text = field("text");
            if name.is_empty() {
                text
            } else {
                format!("{name}: {text}")
            }
        }
        _ => jstr(content, "text")
            .map(str::to_string)
            .or_else(|| content.get("parts").map(text_of))
            .unwrap_or_default(),
    }
}

/// A tool call's input as JSON text: a JSON object the model wrote as it is, else
/// `{"input": TEXT}` (with the code's `language`).
fn tool_input(content: &Value, text: &str) -> String {
    if let Ok(v @ Value::Object(_)) = serde_json::from_str::<Value>(text) {
        return v.to_string();
    }
    let mut input = serde_json::json!({ "input": text });
    if let Some(lang) = jstr(content, "language").filter(|l| !l.is_empty()) {
        input["language"] = Value::from(lang);
    }
    input.to_string()
}

/// Whether a tool message reports a failed run (`metadata.aggregate_result.status`).
fn kernel_failed(msg: &Value) -> bool {
    msg.pointer("/metadata/aggregate_result/status")
        .and_then(Value::as_str)
        .is_some_and(|s| s.contains("exception") || s.contains("error") || s.contains("fail"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(id: &str, parent: Option<&str>, children: &[&str], msg: Value) -> (String, Value) {
        (
            id.to_string(),
            serde_json::json!({"id": id, "parent": parent, "children": children, "message": msg}),
        )
    }

    fn said(role: &str, text: &str) -> Value {
        serde_json::json!({"author": {"role": role}, "content": {"content_type": "text", "parts": [text]}})
    }

    #[test]
    fn the_current_node_path_is_the_conversation_and_empty_nodes_are_skipped() {
        let mapping: Map<String, Value> = [
            node("root", None, &["sys"], Value::Null),
            node("sys", Some("root"), &["u1"], said("system", "")),
            node("u1", Some("sys"), &["a1", "a2"], said("user", "hello")),
            node("a1", Some("u1"), &[], said("assistant", "first try")),
            node("a2", Some("u1"), &[], said("assistant", "second try")),
        ]
        .into_iter()
        .collect();
        let conv =
            serde_json::json!({"id": "c1", "title": "T", "current_node": "a2", "mapping": mapping});
        let s = conversation(&conv).unwrap().unwrap();
        let texts: Vec<(&str, bool)> = s
            .messages
            .iter()
            .map(|m| (m.text.as_str(), m.on_main_chain))
            .collect();
        assert_eq!(
            texts,
            [("hello", true), ("first try", false), ("second try", true)]
        );
        assert_eq!(s.messages[0].parent_native_id, None);
        assert_eq!(s.turn_count, 1);
        assert_eq!(s.turns[0].assistant_response.as_deref(), Some("second try"));
    }

    #[test]
    fn not_a_conversation_is_a_reason() {
        assert!(conversation(&Value::from(3)).is_err());
        assert!(conversation(&serde_json::json!({"id": "x"})).is_err());
        let empty = serde_json::json!({"id": "x", "mapping": {}});
        assert!(conversation(&empty).unwrap().is_none());
    }
}
