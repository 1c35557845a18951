//! Hermes Agent's session files in `<hermes home>/sessions/`, written before (and beside) the
//! state database:
//! - `session_<id>.json`: one document, `{session_id, model, platform, session_start,
//!   last_updated, model_config: {cwd}, messages: [...]}`;
//! - `<YYYYMMDD_HHMMSS>_<hex>.jsonl`: a `{"role":"session_meta", model, platform, tools,
//!   timestamp}` line, then one message a line; the file name is the session id.
//!
//! A session the state database also holds is read from the database only (see
//! [`super::Hermes::discover`]).

use std::path::Path;

use serde_json::{Map, Value};
use trail_model::{
    time, turns, MessageKind, Role, Session, SessionMeta, SourceKind, TitleRank, UpdateMode,
};

use crate::json_fields::jstr;
use crate::openai_chat::{derive_files_and_refs, ChatReader};
use crate::{discover, ids, jsonl, FileParse, SourceError};

const TITLE_CHARS: usize = 200;

/// Returns whether `path` is named like a legacy session file.
pub(crate) fn is_legacy_name(path: &Path) -> bool {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    discover::has_extension(path, "jsonl")
        || (name.starts_with("session_") && discover::has_extension(path, "json"))
}

/// The session id a legacy file names: `session_<id>.json` or `<id>.jsonl`.
pub(crate) fn id_of_name(path: &Path) -> Option<String> {
    let stem = path.file_stem()?.to_str()?;
    let id = if discover::has_extension(path, "json") {
        stem.strip_prefix("session_").unwrap_or(stem)
    } else {
        stem
    };
    Some(id.to_string())
}

/// Returns whether `head` (the first bytes of `path`) is a legacy Hermes session.
pub(crate) fn looks_like_legacy(path: &Path, head: &[u8]) -> bool {
    let has = |s: &[u8]| memchr::memmem::find(head, s).is_some();
    if discover::has_extension(path, "jsonl") {
        let first = head.split(|b| *b == b'\n').next().unwrap_or_default();
        return serde_json::from_slice::<Value>(first)
            .is_ok_and(|v| jstr(&v, "role") == Some("session_meta"));
    }
    discover::has_extension(path, "json")
        && has(b"\"session_id\"")
        && has(b"\"messages\"")
        && (has(b"\"session_start\"") || has(b"\"platform\""))
}

pub(crate) fn parse(path: &Path) -> Result<FileParse, SourceError> {
    let mut out = FileParse::default();
    let (meta, records) = if discover::has_extension(path, "jsonl") {
        let mut meta = Map::new();
        let mut records = Vec::new();
        let outcome = jsonl::read_lines(path, 0, 0, |_, line| {
            let v: Value = serde_json::from_str(line).map_err(|e| format!("invalid JSON: {e}"))?;
            match v {
                Value::Object(o) if o.get("role") == Some(&Value::from("session_meta")) => {
                    meta.extend(o);
                    Ok(())
                }
                Value::Object(_) => {
                    records.push(v);
                    Ok(())
                }
                _ => Err("a message must be a JSON object".into()),
            }
        })?;
        out.issues = outcome.issues;
        out.bytes_parsed = outcome.bytes_parsed;
        out.bytes_read = outcome.bytes_read;
        out.lines = outcome.lines;
        (Value::Object(meta), records)
    } else {
        let bytes = crate::whole::read(path)?;
        let mut v: Value = serde_json::from_slice(&bytes)
            .map_err(|e| SourceError::format(path, format!("not a Hermes session: {e}")))?;
        let records = match v.get_mut("messages").map(Value::take) {
            Some(Value::Array(a)) => a,
            _ => return Err(SourceError::format(path, "no `messages` list")),
        };
        out.bytes_parsed = bytes.len() as u64;
        out.bytes_read = bytes.len() as u64;
        (v, records)
    };
    if records.is_empty() && meta.as_object().is_none_or(Map::is_empty) {
        return Ok(out);
    }
    out.sessions.push(build_session(path, &meta, &records));
    Ok(out)
}

fn build_session(path: &Path, meta: &Value, records: &[Value]) -> Session {
    let native = jstr(meta, "session_id")
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .or_else(|| id_of_name(path))
        .unwrap_or_else(|| "unknown".into());
    let mut sm = SessionMeta::new(
        ids::session_id(SourceKind::Hermes, &native),
        SourceKind::Hermes,
        &native,
    );
    sm.cwd = meta
        .pointer("/model_config/cwd")
        .or_else(|| meta.get("cwd"))
        .and_then(Value::as_str)
        .filter(|c| !c.is_empty())
        .map(str::to_string);
    for k in ["session_start", "last_updated", "timestamp"] {
        if let Some(t) = meta.get(k).and_then(time::from_json) {
            sm.observe_timestamp(&t);
        }
    }
    if let Some(p) = jstr(meta, "platform").filter(|p| !p.is_empty()) {
        sm.metadata = Some(serde_json::json!({ "source": p }));
    }
    let mut session = Session::new(sm);
    session.mode = UpdateMode::Replace;
    let model = jstr(meta, "model")
        .filter(|m| !m.is_empty())
        .map(str::to_string);
    let mut chat = ChatReader::default();
    for rec in records {
        for mut m in super::messages_of(&mut chat, rec) {
            if m.role == Some(Role::Assistant) {
                m.model = jstr(rec, "model")
                    .map(str::to_string)
                    .or_else(|| model.clone());
            }
            if let Some(t) = &m.timestamp {
                session.meta.observe_timestamp(t);
            }
            if let Some(md) = &m.model {
                session.observe_model(md);
            }
            m.seq = u32::try_from(session.messages.len()).unwrap_or(u32::MAX);
            m.on_main_chain = true;
            session.messages.push(m);
        }
    }
    if let Some(m) = &model {
        session.observe_model(m);
    }
    let order: Vec<usize> = (0..session.messages.len()).collect();
    session.turn_count = turns::assign_turn_indexes(&mut session.messages, &order);
    session.turns = turns::build_turns(&session.messages);
    derive_files_and_refs(&mut session, super::SHELL_TOOLS);
    session.meta.title = session
        .messages
        .iter()
        .find(|m| m.kind == Some(MessageKind::Prompt) && !m.text.trim().is_empty())
        .map(|m| trail_model::truncate_chars(m.text.trim(), TITLE_CHARS).to_string());
    session.meta.title_rank = TitleRank::FIRST_PROMPT;
    session
}
