//! Kiro IDE's newer generation: `workspace-sessions/<base64 folder>/<session>.json`, one chat
//! session a file, rewritten whole, with `sessions.json` beside it listing the folder's
//! sessions.
//!
//! # Format
//! - The folder's name is the workspace's path in base64 (padding and the two symbols may be
//!   written URL-safe: `-`, `_`).
//! - `sessions.json`: `[{sessionId, title, dateCreated (epoch ms, number or text),
//!   workspaceDirectory}]`.
//! - `<session>.json`: `{sessionId, title, selectedModel, workspaceDirectory, history: [entry]}`;
//!   each entry `{message: {role: user|assistant, content}, executionId, promptLogs:
//!   {completion}}`, `content` text or a list of `{type: text, text}` blocks (other block types:
//!   images...).
//!
//! # Mapping
//! - The session's folder: the file's `workspaceDirectory`, else the index entry's, else the
//!   decoded folder name. Its time: the index entry's `dateCreated` (the file has none; the
//!   file's own `dateCreated` if a version writes one).
//! - A user message is a prompt; an assistant message answer text, with the session's model.
//!   Where the agent ran an execution, Kiro writes the placeholder `On it.` and keeps the answer
//!   in the execution's log: the `promptLogs.completion` of the entry is the answer when there
//!   is one, else the placeholder stays and the file's notes count those answers (their logs
//!   are not read: see [`super`]). No tool calls, no tokens.
//! - An entry that is not `{message: {role, content}}` is a problem, skipped.

use std::path::Path;

use serde_json::{json, Value};
use trail_model::{time, Message, MessageKind, Role, Session, SessionMeta, SourceKind, TitleRank};

use super::SESSIONS_INDEX;
use crate::json_fields::jstr;
use crate::{ids, whole, FileParse, SourceError};

/// The answer Kiro writes where an execution's log holds the real one.
pub const PLACEHOLDER_ANSWER: &str = "On it.";

/// Whether `head` (of the `.json` file `path`) is a Kiro IDE session: a session id and a
/// history of messages, and a field only Kiro writes or a place under `workspace-sessions`.
pub(crate) fn looks_like(path: &Path, head: &[u8]) -> bool {
    let has = |k: &[u8]| memchr::memmem::find(head, k).is_some();
    let opens = head.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{');
    let placed = path
        .parent()
        .and_then(Path::parent)
        .and_then(Path::file_name)
        .is_some_and(|n| n == super::WORKSPACE_SESSIONS);
    opens
        && has(b"\"sessionId\"")
        && has(b"\"history\"")
        && (placed || has(b"\"selectedModel\"") || has(b"\"workspaceDirectory\""))
}

pub(crate) fn parse(path: &Path) -> Result<FileParse, SourceError> {
    let (file, mut out) = super::read_document(path, "Kiro IDE session")?;
    let history = file
        .get("history")
        .and_then(Value::as_array)
        .ok_or_else(|| SourceError::format(path, "no `history` list"))?;
    let mut session = Session::new(session_meta(path, &file));
    let model = jstr(&file, "selectedModel").filter(|m| !m.is_empty());
    if let Some(m) = model {
        session.observe_model(m);
    }
    super::push_records(
        path,
        &mut session,
        &mut out,
        history,
        "history entry",
        |e| message_of(e, model),
    );
    let in_logs = session
        .messages
        .iter()
        .filter(|m| m.text == PLACEHOLDER_ANSWER)
        .count();
    if in_logs > 0 {
        out.notes.push(format!(
            "answers kept only in execution logs (not read): {in_logs}"
        ));
    }
    Ok(super::finish(out, session, || {
        format!("a history of {} entries, none with text", history.len())
    }))
}

fn session_meta(path: &Path, file: &Value) -> SessionMeta {
    let kind = SourceKind::KiroIde;
    let native = jstr(file, "sessionId")
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .or_else(|| Some(path.file_stem()?.to_str()?.to_string()))
        .unwrap_or_else(|| "unknown".into());
    let mut meta = SessionMeta::new(ids::session_id(kind, &native), kind, &native);
    let listed = index_entry(path, &native).unwrap_or(Value::Null);
    let text = |v: &Value, k: &str| {
        jstr(v, k)
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    };
    meta.cwd = text(file, "workspaceDirectory")
        .or_else(|| text(&listed, "workspaceDirectory"))
        .or_else(|| folder_of_name(path));
    if let Some(title) = text(file, "title").or_else(|| text(&listed, "title")) {
        // Kiro titles a session with its first prompt, cut short.
        meta.title = Some(title);
        meta.title_rank = TitleRank::FIRST_PROMPT;
    }
    for v in [file.get("dateCreated"), listed.get("dateCreated")]
        .into_iter()
        .flatten()
    {
        if let Some(ts) = date(v) {
            meta.observe_timestamp(&ts);
        }
    }
    meta
}

/// A time that may be epoch milliseconds written as text (`"1733308800000"`).
fn date(v: &Value) -> Option<String> {
    match v {
        Value::String(s) if s.trim().bytes().all(|b| b.is_ascii_digit()) => {
            time::from_json(&json!(s.trim().parse::<i64>().ok()?))
        }
        other => time::from_json(other),
    }
}

/// The entry of `sessions.json` beside `path` for session `id`.
fn index_entry(path: &Path, id: &str) -> Option<Value> {
    let index = whole::read_json_lenient(&path.parent()?.join(SESSIONS_INDEX))?;
    let Value::Array(entries) = index else {
        return None;
    };
    entries
        .into_iter()
        .find(|e| jstr(e, "sessionId") == Some(id))
}

/// The workspace path the session's folder name encodes.
fn folder_of_name(path: &Path) -> Option<String> {
    let name = path.parent()?.file_name()?.to_str()?;
    decode_folder_name(name)
}

/// Decodes a base64 folder name, standard or URL-safe, padded with `=`, `_` or not at all.
/// Trailing `_` are read as padding first (a path rarely ends in the byte a final `_` would
/// add); a decoding that reads as an absolute path wins.
pub fn decode_folder_name(name: &str) -> Option<String> {
    let unpadded = name.trim_end_matches('=');
    let candidates = [unpadded.trim_end_matches('_'), unpadded];
    let decoded: Vec<String> = candidates.iter().filter_map(|c| base64_text(c)).collect();
    let absolute = |p: &&String| {
        p.starts_with('/')
            || p.starts_with("\\\\")
            || p.get(1..3).is_some_and(|s| s == ":\\" || s == ":/")
    };
    decoded
        .iter()
        .find(absolute)
        .or_else(|| decoded.first())
        .cloned()
}

/// Base64 without padding (either alphabet) as UTF-8 text.
fn base64_text(s: &str) -> Option<String> {
    let value = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            _ => return None,
        } as u32)
    };
    if s.is_empty() || s.len() % 4 == 1 {
        return None;
    }
    let mut bytes = Vec::with_capacity(s.len() * 3 / 4);
    for chunk in s.as_bytes().chunks(4) {
        let mut n = 0u32;
        for (k, c) in chunk.iter().enumerate() {
            n |= value(*c)? << (18 - 6 * k);
        }
        let take = chunk.len() - 1;
        bytes.extend_from_slice(&n.to_be_bytes()[1..=take]);
    }
    String::from_utf8(bytes).ok().filter(|t| !t.contains('\0'))
}

/// One history entry as a message: `Ok(None)` for one without text.
fn message_of(entry: &Value, model: Option<&str>) -> Result<Option<Message>, String> {
    let message = entry
        .get("message")
        .filter(|m| m.is_object())
        .ok_or("an entry without a `message` object")?;
    let role = jstr(message, "role").ok_or("a message without a `role`")?;
    let mut text = content_text(message.get("content").unwrap_or(&Value::Null))?;
    let native_id = jstr(entry, "executionId").map(str::to_string);
    if role == "assistant" && (text.trim().is_empty() || text.trim() == PLACEHOLDER_ANSWER) {
        if let Some(answer) = entry
            .pointer("/promptLogs/completion")
            .and_then(Value::as_str)
            .filter(|c| !c.trim().is_empty())
        {
            text = answer.to_string();
        }
    }
    if text.trim().is_empty() {
        return Ok(None);
    }
    let m = match role {
        "user" => Message::prompt(text),
        "assistant" => Message::answer(text.trim()).with_model(model.map(str::to_string)),
        other => Message::new(Role::System, MessageKind::Unknown, text)
            .with_extra(Some(json!({ "role": other }).to_string())),
    };
    Ok(Some(m.with_native_id(native_id)))
}

/// A message's content: text, or its text blocks joined (other blocks named in brackets).
fn content_text(content: &Value) -> Result<String, String> {
    match content {
        Value::String(s) => Ok(s.clone()),
        Value::Null => Ok(String::new()),
        Value::Array(blocks) => Ok(blocks
            .iter()
            .map(|b| match (jstr(b, "type"), jstr(b, "text")) {
                (Some("text") | None, Some(t)) => t.to_string(),
                (Some(kind), _) => format!("[{kind}]"),
                (None, None) => String::new(),
            })
            .filter(|t| !t.is_empty())
            .collect::<Vec<_>>()
            .join("\n")),
        _ => Err("a message whose content is neither text nor a list of blocks".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folder_names_decode_in_either_alphabet_and_padding() {
        // base64 of "/home/dev/shop" and "d:\\Projects\\shop" written here by hand.
        assert_eq!(
            decode_folder_name("L2hvbWUvZGV2L3Nob3A").as_deref(),
            Some("/home/dev/shop")
        );
        assert_eq!(
            decode_folder_name("L2hvbWUvZGV2L3Nob3A=").as_deref(),
            Some("/home/dev/shop")
        );
        assert_eq!(
            decode_folder_name("L2hvbWUvZGV2L3Nob3A_").as_deref(),
            Some("/home/dev/shop")
        );
        assert_eq!(
            decode_folder_name("ZDpcUHJvamVjdHNcc2hvcA").as_deref(),
            Some("d:\\Projects\\shop")
        );
        assert_eq!(decode_folder_name("not base64!"), None);
    }
}
