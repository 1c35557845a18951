//! Goose (`aaif-goose/goose`, formerly `block/goose`): `sessions/sessions.db` in Goose's data
//! folder (`~/.local/share/goose` on Linux and macOS, `%APPDATA%\Block\goose\data` on
//! Windows, `$GOOSE_PATH_ROOT/data`), and the per-session JSONL files older releases kept in
//! the same `sessions` folder.
//!
//! # What was checked, and where
//! Read in the agent's own source (`crates/goose/src/session/session_manager.rs`, schema
//! version 17, and `conversation/message.rs`):
//! - `sessions(id, name, description, user_set_name, session_type (user, scheduled,
//!   sub_agent, hidden, terminal, gateway, acp), working_dir, created_at, updated_at, ...,
//!   input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, accumulated_*,
//!   accumulated_cost, provider_name, model_config_json, parent_session_id, ...)`; times are
//!   SQLite `TIMESTAMP` text;
//! - `messages(id, message_id, session_id, role, content_json, created_timestamp (Unix
//!   seconds; milliseconds above 10^10), timestamp, tokens, metadata_json {userVisible,
//!   agentVisible})`;
//! - `usage_ledger(session_id, created_timestamp, model, input_tokens, output_tokens,
//!   total_tokens, cache_read_tokens, cache_write_tokens, cost, cost_source, is_compaction)`
//!   (schema 15 on): one row per provider request;
//! - `content_json` is a list of `{type, ...}` items: `text {text}`, `image`, `thinking
//!   {thinking}`, `redactedThinking`, `toolRequest {id, toolCall: {status, value: {name,
//!   arguments}} }`, `toolResponse {id, toolResult: {status, value | error}}` (the value a
//!   list of content items, or `{content, isError}`), `toolConfirmationRequest`,
//!   `systemNotification`...;
//! - legacy JSONL (`session/legacy.rs`): line 1 the session's metadata (`working_dir`,
//!   `description`, token counts), then one message per line (`role`, `created`, `content`).
//!
//! # Mapping
//! - Session ids are Goose's ids (`20250101_1`-style, so `goose:<id>`); the cwd is
//!   `working_dir`; `parent_session_id` links sub-agents.
//! - Usage: the ledger's rows where the database has them (counted once each); else the
//!   session's accumulated totals as one record. Legacy files: their metadata's totals.

use std::path::{Path, PathBuf};

use rusqlite::Connection;
use serde_json::Value;
use trail_model::{
    time, truncate_chars, Message, MessageKind, ParentLink, ParseIssue, Role, Session, SessionMeta,
    SourceKind, Usage,
};

use crate::ids;
use crate::json_fields::{jcount, jstr, value_text};
use crate::linear::{finish_linear_session, push_message, PendingFile};
use crate::sqlite_readonly::{
    db_error, read_database, record_issue, require_tables, rows_as_json, SQLITE_MAGIC,
};
use crate::{discover, FileParse, ParseRequest, Source, SourceError};

/// Version of this parser, stored with every file it read (see `Source::parser_version`).
pub const PARSER_VERSION: u32 = 1;

/// The database's file name.
pub const DB_NAME: &str = "sessions.db";
const TITLE_CHARS: usize = 200;
const SHELL_TOOLS: &[&str] = &["developer__shell", "shell"];

/// Goose's session database and legacy JSONL files.
pub struct Goose;

impl Source for Goose {
    fn kind(&self) -> SourceKind {
        SourceKind::Goose
    }

    fn parser_version(&self) -> u32 {
        PARSER_VERSION
    }

    /// Roots are Goose's data folders (holding `sessions/`), the `sessions` folder itself, or
    /// the legacy `~/.goose/sessions`. The legacy files of a folder that has the database are
    /// skipped: Goose imported them into it.
    fn discover(&self, roots: &[PathBuf]) -> Vec<PathBuf> {
        let mut out = Vec::new();
        for root in roots {
            for dir in [root.join("sessions"), root.clone()] {
                let db = dir.join(DB_NAME);
                if db.is_file() {
                    out.push(db);
                } else {
                    out.extend(discover::walk_files(&dir, 1, |p| {
                        discover::has_extension(p, "jsonl")
                    }));
                }
            }
        }
        out.sort();
        out.dedup();
        out
    }

    fn detect(&self, path: &Path, head: &[u8]) -> bool {
        if path.file_name().is_some_and(|n| n == DB_NAME) {
            return head.starts_with(SQLITE_MAGIC);
        }
        discover::has_extension(path, "jsonl") && is_legacy_head(head)
    }

    fn appendable(&self, _path: &Path) -> bool {
        // Legacy files were rewritten whole on every save.
        false
    }

    fn parse(&self, request: ParseRequest<'_>) -> Result<FileParse, SourceError> {
        let path = request.path;
        if path.file_name().is_some_and(|n| n == DB_NAME) {
            read_database(path, |conn| read_db(path, conn))
        } else {
            parse_legacy(path)
        }
    }
}

/// A legacy file's first line: the session metadata (`working_dir` and `description`).
fn is_legacy_head(head: &[u8]) -> bool {
    let first = head.split(|b| *b == b'\n').next().unwrap_or_default();
    serde_json::from_slice::<Value>(first)
        .is_ok_and(|v| v.get("working_dir").is_some() && v.get("description").is_some())
}

/// A Goose message time: Unix seconds, or milliseconds above 10^10.
fn epoch(v: Option<&Value>) -> Option<String> {
    let n = v?.as_f64()?;
    if n <= 0.0 {
        return None;
    }
    let ms = if n > 1e10 { n } else { n * 1000.0 };
    time::from_epoch_millis(ms as i64)
}

/// A SQLite `TIMESTAMP` (`2026-01-02 03:04:05`, maybe with fractions or an offset).
fn sql_time(v: Option<&Value>) -> Option<String> {
    let s = v?.as_str()?.trim();
    time::normalize(s).or_else(|| {
        let t = s.replacen(' ', "T", 1);
        time::normalize(&t).or_else(|| time::normalize(&format!("{t}Z")))
    })
}

fn text_of(row: &Value, key: &str) -> Option<String> {
    row.get(key)
        .filter(|v| !v.is_null())
        .map(value_text)
        .filter(|s| !s.is_empty())
}

fn read_db(path: &Path, conn: &Connection) -> Result<FileParse, SourceError> {
    let err = |e: rusqlite::Error| db_error(path, &e);
    let tables = require_tables(conn, path, &["sessions", "messages"], "Goose database")?;
    let sessions =
        rows_as_json(conn, "SELECT * FROM sessions ORDER BY created_at, id").map_err(err)?;
    let messages = rows_as_json(
        conn,
        "SELECT * FROM messages ORDER BY session_id, created_timestamp, id",
    )
    .map_err(err)?;
    let ledger = if tables.contains("usage_ledger") {
        rows_as_json(
            conn,
            "SELECT * FROM usage_ledger ORDER BY session_id, created_timestamp, id",
        )
        .map_err(err)?
    } else {
        Vec::new()
    };
    let mut out = FileParse::default();
    for row in &sessions {
        let Some(id) = text_of(row, "id") else {
            out.issues.push(record_issue(
                path,
                "sessions row",
                &row.to_string(),
                "no id",
            ));
            continue;
        };
        let of = |r: &&Value| text_of(r, "session_id").as_deref() == Some(id.as_str());
        let msgs: Vec<&Value> = messages.iter().filter(of).collect();
        let spent: Vec<&Value> = ledger.iter().filter(of).collect();
        let mut session = new_session(&id, row);
        let mut b = Builder::default();
        for m in msgs {
            let content = match serde_json::from_str::<Value>(
                &text_of(m, "content_json").unwrap_or_default(),
            ) {
                Ok(Value::Array(a)) => a,
                _ => {
                    out.issues.push(record_issue(
                        path,
                        &format!("messages row id={}", text_of(m, "id").unwrap_or_default()),
                        &text_of(m, "content_json").unwrap_or_default(),
                        "content_json is not a JSON array",
                    ));
                    continue;
                }
            };
            let visible = text_of(m, "metadata_json")
                .and_then(|s| serde_json::from_str::<Value>(&s).ok())
                .and_then(|v| v.get("userVisible").and_then(Value::as_bool))
                .unwrap_or(true);
            let msg = RawMessage {
                id: text_of(m, "message_id").or_else(|| text_of(m, "id")),
                role: text_of(m, "role").unwrap_or_default(),
                ts: epoch(m.get("created_timestamp")).or_else(|| sql_time(m.get("timestamp"))),
                visible,
                content: &content,
            };
            map_message(&mut session, &mut b, &msg);
        }
        finish(&mut session, b);
        if spent.is_empty() {
            totals_usage(&mut session, row, "accumulated_");
        } else {
            ledger_usage(&mut session, &spent);
        }
        out.sessions.push(session);
    }
    Ok(out)
}

fn new_session(id: &str, row: &Value) -> Session {
    let mut meta = SessionMeta::new(
        ids::session_id(SourceKind::Goose, id),
        SourceKind::Goose,
        id,
    );
    meta.title = text_of(row, "name").or_else(|| text_of(row, "description"));
    meta.cwd = text_of(row, "working_dir");
    if let Some(parent) = text_of(row, "parent_session_id") {
        meta.parent = Some(ParentLink {
            session_id: ids::session_id(SourceKind::Goose, &parent),
            tool_call_id: None,
            agent_ref: Some(id.to_string()),
        });
    }
    for key in ["created_at", "updated_at"] {
        if let Some(ts) = sql_time(row.get(key)) {
            meta.observe_timestamp(&ts);
        }
    }
    let model = text_of(row, "model_config_json")
        .and_then(|s| serde_json::from_str::<Value>(&s).ok())
        .and_then(|v| jstr(&v, "model_name").map(str::to_string));
    let mut session = Session::new(meta);
    if let Some(m) = model {
        session.observe_model(&m);
    }
    session
}

#[derive(Default)]
struct Builder {
    files: Vec<PendingFile>,
    first_prompt: Option<String>,
}

struct RawMessage<'a> {
    id: Option<String>,
    role: String,
    ts: Option<String>,
    visible: bool,
    content: &'a [Value],
}

fn map_message(session: &mut Session, b: &mut Builder, raw: &RawMessage<'_>) {
    let user = raw.role == "user";
    let model = session.models.last().cloned();
    let base = |kind: MessageKind, role: Role| {
        Message::new(role, kind, "")
            .with_native_id(raw.id.clone())
            .with_timestamp(raw.ts.clone())
            .with_model(if role == Role::Assistant {
                model.clone()
            } else {
                None
            })
    };
    let mut prompt_taken = false;
    for item in raw.content {
        match jstr(item, "type").unwrap_or("") {
            "text" => {
                let text = jstr(item, "text").unwrap_or("").to_string();
                let kind = if user && raw.visible && !prompt_taken {
                    prompt_taken = true;
                    MessageKind::Prompt
                } else if user {
                    MessageKind::Meta
                } else {
                    MessageKind::Text
                };
                if kind == MessageKind::Prompt
                    && b.first_prompt.is_none()
                    && !text.trim().is_empty()
                {
                    b.first_prompt = Some(truncate_chars(text.trim(), TITLE_CHARS).to_string());
                }
                let mut m = base(kind, if user { Role::User } else { Role::Assistant });
                m.text = text;
                push_message(session, m);
            }
            "thinking" | "redactedThinking" => {
                let mut m = base(MessageKind::Thinking, Role::Assistant);
                m.text = jstr(item, "thinking")
                    .unwrap_or("[redacted thinking]")
                    .to_string();
                push_message(session, m);
            }
            "toolRequest" => map_request(
                session,
                b,
                item,
                base(MessageKind::ToolCall, Role::Assistant),
            ),
            "toolResponse" => {
                map_response(session, item, base(MessageKind::ToolResult, Role::Tool))
            }
            "image" | "toolConfirmationRequest" | "systemNotification" | "frontendToolRequest" => {
                let mut m = base(
                    MessageKind::Meta,
                    if user { Role::User } else { Role::System },
                );
                m.text = jstr(item, "msg")
                    .or_else(|| jstr(item, "prompt"))
                    .or_else(|| jstr(item, "type"))
                    .unwrap_or("")
                    .to_string();
                push_message(session, m);
            }
            other => {
                let mut m = base(MessageKind::Unknown, Role::System);
                m.text = other.to_string();
                m.extra = Some(item.to_string());
                push_message(session, m);
            }
        }
    }
}

fn map_request(session: &mut Session, b: &mut Builder, item: &Value, mut m: Message) {
    let call = item.get("toolCall").unwrap_or(&Value::Null);
    let value = call.get("value").unwrap_or(call);
    let name = jstr(value, "name").map(str::to_string);
    let args = value.get("arguments").filter(|v| !v.is_null());
    m.tool_name = name.clone();
    m.tool_call_id = jstr(item, "id").map(str::to_string);
    m.tool_input = args.map(Value::to_string);
    if jstr(call, "status") == Some("error") {
        m.text = jstr(call, "error").unwrap_or("").to_string();
    }
    let ts = m.timestamp.clone();
    let path = args.and_then(|a| jstr(a, "path")).map(str::to_string);
    let seq = push_message(session, m);
    if let Some(path) = path {
        b.files.push(PendingFile {
            seq: Some(seq),
            path,
            tool_name: name,
            timestamp: ts,
        });
    }
}

fn map_response(session: &mut Session, item: &Value, mut m: Message) {
    let result = item.get("toolResult").unwrap_or(&Value::Null);
    m.tool_call_id = jstr(item, "id").map(str::to_string);
    m.tool_name = session
        .messages
        .iter()
        .rev()
        .find(|c| c.kind() == MessageKind::ToolCall && c.tool_call_id == m.tool_call_id)
        .and_then(|c| c.tool_name.clone());
    let mut text = String::new();
    if jstr(result, "status") == Some("error") {
        m.is_error = true;
        text = result.get("error").map(value_text).unwrap_or_default();
    } else {
        let value = result.get("value").unwrap_or(&Value::Null);
        let items = value
            .as_array()
            .or_else(|| value.get("content").and_then(Value::as_array));
        for c in items.into_iter().flatten() {
            if let Some(t) = jstr(c, "text") {
                if !text.is_empty() {
                    text.push('\n');
                }
                text.push_str(t);
            }
        }
        m.is_error = value.get("isError").and_then(Value::as_bool) == Some(true);
    }
    m.tool_output = Some(text);
    push_message(session, m);
}

fn finish(session: &mut Session, b: Builder) {
    if session.meta.title.is_none() {
        session.meta.title = b.first_prompt.clone();
    }
    finish_linear_session(session, b.files, SHELL_TOOLS);
}

fn usage_of(key: String, v: &Value, prefix: &str) -> Usage {
    let n = |k: &str| jcount(v.get(format!("{prefix}{k}").as_str()));
    let (input, output) = (n("input_tokens"), n("output_tokens"));
    let (read, write) = (n("cache_read_tokens"), n("cache_write_tokens"));
    Usage {
        request_key: key,
        input_tokens: input,
        output_tokens: output,
        cache_read_tokens: read,
        cache_creation_tokens: write,
        tokens_known: crate::shared::blocks::any_count(&[input, output, read, write]),
        ..Usage::default()
    }
}

fn ledger_usage(session: &mut Session, rows: &[&Value]) {
    for (i, r) in rows.iter().enumerate() {
        let mut u = usage_of(
            format!(
                "ledger:{}",
                text_of(r, "id").unwrap_or_else(|| i.to_string())
            ),
            r,
            "",
        );
        u.model = text_of(r, "model");
        if let Some(m) = &u.model {
            session.observe_model(m);
        }
        u.cost_usd = r.get("cost").and_then(Value::as_f64);
        u.timestamp = epoch(r.get("created_timestamp"));
        u.is_sidechain = session.meta.parent.is_some();
        session.usage.push(u);
    }
}

/// The session's totals as one record (databases before the ledger; legacy files).
fn totals_usage(session: &mut Session, row: &Value, prefix: &str) {
    let mut u = usage_of("session".to_string(), row, prefix);
    if !u.tokens_known && prefix == "accumulated_" {
        u = usage_of("session".to_string(), row, "");
    }
    u.cost_usd = row.get("accumulated_cost").and_then(Value::as_f64);
    if !u.tokens_known && u.cost_usd.is_none() {
        return;
    }
    u.model = session.models.last().cloned();
    u.timestamp = session.meta.updated_at.clone();
    u.is_sidechain = session.meta.parent.is_some();
    session.usage.push(u);
}

/// A legacy JSONL session: metadata line, then messages.
fn parse_legacy(path: &Path) -> Result<FileParse, SourceError> {
    let data = crate::whole::read(path)?;
    let text = String::from_utf8_lossy(&data);
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty());
    let meta: Value = lines
        .next()
        .and_then(|(_, l)| serde_json::from_str(l).ok())
        .filter(|v: &Value| v.get("working_dir").is_some())
        .ok_or_else(|| SourceError::format(path, "not a Goose session file: no metadata line"))?;
    let id = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut session = new_session(&id, &meta);
    let mut b = Builder::default();
    let mut issues: Vec<ParseIssue> = Vec::new();
    for (i, line) in lines {
        let v: Value = match serde_json::from_str(line) {
            Ok(v) => v,
            Err(e) => {
                issues.push(ParseIssue {
                    path: path.display().to_string(),
                    line: Some(i as u64 + 1),
                    byte_offset: None,
                    excerpt: Some(truncate_chars(line, 200).to_string()),
                    reason: format!("invalid JSON: {e}"),
                });
                continue;
            }
        };
        let content: Vec<Value> = v
            .get("content")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let raw = RawMessage {
            id: jstr(&v, "id").map(str::to_string),
            role: jstr(&v, "role").unwrap_or("").to_string(),
            ts: epoch(v.get("created")),
            visible: v
                .pointer("/metadata/userVisible")
                .and_then(Value::as_bool)
                .unwrap_or(true),
            content: &content,
        };
        if let Some(ts) = &raw.ts {
            session.meta.observe_timestamp(ts);
        }
        map_message(&mut session, &mut b, &raw);
    }
    finish(&mut session, b);
    totals_usage(&mut session, &meta, "accumulated_");
    Ok(FileParse {
        sessions: vec![session],
        issues,
        bytes_parsed: data.len() as u64,
        bytes_read: data.len() as u64,
        lines: text.lines().count() as u64,
        ..FileParse::default()
    })
}
