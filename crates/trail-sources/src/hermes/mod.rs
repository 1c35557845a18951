//! Hermes Agent (NousResearch/hermes-agent): the SQLite store `<hermes home>/state.db`
//! (`$HERMES_HOME`, default `~/.hermes`; [`state_db`]) and the older per-session JSON files
//! in `<hermes home>/sessions/` ([`legacy`]).
//!
//! Both hold OpenAI-style messages (`role`, `content`, `tool_calls`, `tool_call_id`,
//! `tool_name`, `reasoning` / `reasoning_content`); [`messages_of`] reads one.
//! Sessions come from every surface Hermes serves (`cli`, `tui`, chat platforms such as
//! `telegram`); the surface is kept in the session's metadata (`source`), not filtered out.

pub mod legacy;
pub mod state_db;

use std::path::{Path, PathBuf};

use serde_json::Value;
use trail_model::{time, Message, MessageKind, Role, SourceKind};

use crate::json_fields::jstr;
use crate::openai_chat::{self, ChatReader};
use crate::sqlite_readonly::{is_sqlite_file, SQLITE_MAGIC};
use crate::{discover, FileParse, ParseRequest, Source, SourceError};

/// Hermes Agent's state database and legacy session files.
pub struct Hermes;

/// The state database's file name.
pub const STATE_DB: &str = "state.db";
/// Tools whose output may hold git's commit lines.
pub(crate) const SHELL_TOOLS: &[&str] = &["terminal", "shell", "bash", "execute_code"];

/// Version of this parser, stored with every file it read (see `Source::parser_version`).
/// 1: the first version.
pub const PARSER_VERSION: u32 = 1;

impl Source for Hermes {
    fn parser_version(&self) -> u32 {
        PARSER_VERSION
    }

    fn kind(&self) -> SourceKind {
        SourceKind::Hermes
    }

    fn discover(&self, roots: &[PathBuf]) -> Vec<PathBuf> {
        let mut out = Vec::new();
        for root in roots {
            let db = root.join(STATE_DB);
            let in_db = if db.is_file() {
                out.push(db.clone());
                state_db::session_ids(&db)
            } else {
                Default::default()
            };
            // A legacy file of a session the database holds would repeat it.
            let legacy = discover::walk_files(&root.join("sessions"), 1, legacy::is_legacy_name);
            out.extend(
                legacy
                    .into_iter()
                    .filter(|p| legacy::id_of_name(p).is_none_or(|id| !in_db.contains(&id))),
            );
        }
        out.sort();
        out.dedup();
        out
    }

    fn detect(&self, path: &Path, head: &[u8]) -> bool {
        if path.file_name().is_some_and(|n| n == STATE_DB) {
            return head.starts_with(SQLITE_MAGIC) && state_db::is_hermes_db(path);
        }
        legacy::looks_like_legacy(path, head)
    }

    fn appendable(&self, _path: &Path) -> bool {
        // The database is rewritten in place; legacy files are rewritten whole.
        false
    }

    fn parse(&self, request: ParseRequest<'_>) -> Result<FileParse, SourceError> {
        let path = request.path;
        if path.file_name().is_some_and(|n| n == STATE_DB) && is_sqlite_file(path) {
            return state_db::parse(path);
        }
        legacy::parse(path)
    }
}

/// A `tool_calls` value: a list, or a list written as JSON text (as the database stores it).
fn tool_calls(v: Option<&Value>) -> Option<Value> {
    match v? {
        Value::Array(a) if !a.is_empty() => Some(Value::Array(a.clone())),
        Value::String(s) if !s.trim().is_empty() => serde_json::from_str::<Value>(s)
            .ok()
            .filter(Value::is_array),
        _ => None,
    }
}

/// A tool's output reports a failure: Hermes tools answer JSON with `success: false`, an
/// `error`, or a non-zero `exit_code`.
fn failed_output(text: &str) -> bool {
    let t = text.trim_start();
    if !t.starts_with('{') {
        return false;
    }
    serde_json::from_str::<Value>(t).is_ok_and(|v| {
        v.get("success").and_then(Value::as_bool) == Some(false)
            || v.get("exit_code")
                .and_then(Value::as_i64)
                .is_some_and(|c| c != 0)
            || v.get("error")
                .is_some_and(|e| !e.is_null() && e != &Value::Bool(false) && e != "")
    })
}

/// A time Hermes records: epoch seconds as a float (rounded to the millisecond, as Hermes'
/// own exports show them), or ISO text.
pub(crate) fn timestamp(v: &Value) -> Option<String> {
    match v.as_f64() {
        Some(secs) if secs.is_finite() && secs > 0.0 => {
            time::from_epoch_millis((secs * 1000.0).round() as i64)
        }
        _ => time::from_json(v),
    }
}

/// The messages of one Hermes message record (a legacy JSON entry or a database row turned
/// into an object). `session_meta` entries give none.
pub(crate) fn messages_of(chat: &mut ChatReader, rec: &Value) -> Vec<Message> {
    let ts = rec.get("timestamp").and_then(timestamp);
    let role = jstr(rec, "role").unwrap_or("");
    let mut out = match role {
        "user" => {
            let text = openai_chat::content_text(rec.get("content"));
            let kind = if jstr(rec, "display_kind") == Some("hidden") {
                MessageKind::Meta
            } else {
                MessageKind::Prompt
            };
            vec![Message::new(Role::User, kind, text)]
        }
        "assistant" => {
            let mut rec = rec.clone();
            if let Some(o) = rec.as_object_mut() {
                match tool_calls(o.get("tool_calls")) {
                    Some(calls) => o.insert("tool_calls".into(), calls),
                    None => o.remove("tool_calls"),
                };
            }
            chat.assistant(&rec, &["reasoning_content", "reasoning"])
        }
        "tool" => {
            let mut m = chat.tool_result(rec, failed_output);
            if let Some(name) = jstr(rec, "tool_name").filter(|n| !n.is_empty()) {
                m.tool_name = Some(name.to_string());
            }
            if m.tool_call_id.as_deref() == Some("") {
                m.tool_call_id = None;
            }
            vec![m]
        }
        "session_meta" => Vec::new(),
        "system" => vec![Message::new(
            Role::System,
            MessageKind::Meta,
            openai_chat::content_text(rec.get("content")),
        )],
        _ => {
            let mut m = Message::new(Role::System, MessageKind::Unknown, String::new());
            m.extra = Some(rec.to_string());
            vec![m]
        }
    };
    for m in &mut out {
        m.timestamp.clone_from(&ts);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_are_read_from_json_results() {
        assert!(failed_output(r#"{"success": false, "output": ""}"#));
        assert!(failed_output(r#"{"error": "no such file"}"#));
        assert!(!failed_output(r#"{"success": true, "error": null}"#));
        assert!(failed_output(r#"{"output": "", "exit_code": 2}"#));
        assert!(!failed_output("plain text"));
    }

    #[test]
    fn tool_calls_stored_as_text_are_read() {
        let v = Value::String(r#"[{"id":"c","function":{"name":"terminal"}}]"#.into());
        assert!(tool_calls(Some(&v)).is_some());
        assert!(tool_calls(Some(&Value::String(String::new()))).is_none());
    }
}
