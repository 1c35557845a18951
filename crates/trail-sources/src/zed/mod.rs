//! Zed's agent panel threads: `threads/threads.db` in Zed's data folder
//! (`~/.local/share/zed` on Linux, `~/Library/Application Support/Zed` on macOS,
//! `%LOCALAPPDATA%\Zed` on Windows).
//!
//! # What was checked, and where
//! Read in the agent's own source (`zed-industries/zed`, `crates/agent/src/db.rs`):
//! - the table `threads(id, summary, updated_at, data_type, data)`, with `parent_id`,
//!   `folder_paths` (newline-separated, sorted), `folder_paths_order` and `created_at` added
//!   by later migrations; times are RFC 3339 text;
//! - `data` is the thread's JSON, zstd-compressed when `data_type` is `zstd` (every thread
//!   Zed saves today), plain when `json`;
//! - the JSON (`DbThread`, version `0.3.0`): `title`, `messages` (serde's external tagging:
//!   `{"User": {id, content}}`, `{"Agent": {content, tool_results}}`, `"Resume"`), `model
//!   {provider, model}`, `cumulative_token_usage` and `request_token_usage` (by user message
//!   id: `input_tokens, output_tokens, cache_creation_input_tokens,
//!   cache_read_input_tokens`), `subagent_context {parent_thread_id}`, `detailed_summary`.
//!   User content items are `Text`, `Mention {uri, content}`, `Image`; agent items `Text`,
//!   `Thinking {text}`, `RedactedThinking`, `ToolUse {id, name, input, raw_input}`;
//!   `tool_results` maps a tool use id to `{tool_name, is_error, content, output}`. Threads
//!   saved by Zed's first agent (no `version`) are read as far as the same fields go.
//!
//! # Mapping
//! - Session ids are `zed:<thread id>` (the id is a UUID in practice, then kept as is); the
//!   cwd is the first of `folder_paths`; the parent is `parent_id` (else
//!   `subagent_context.parent_thread_id`).
//! - Messages carry no time: every message gets none, and the session its row's
//!   `created_at` / `updated_at`.
//! - Usage: one record per `request_token_usage` entry (keyed by its user message id), and,
//!   when the cumulative usage is larger than their sum (Zed does not record every request
//!   in the map), one more record with the difference, so the session's total is the
//!   cumulative usage, counted once.

use std::path::{Path, PathBuf};

use rusqlite::Connection;
use serde_json::Value;
use trail_model::{
    time, truncate_chars, Message, MessageKind, ParentLink, Role, Session, SessionMeta, SourceKind,
    Usage,
};

use crate::ids;
use crate::json_fields::{jcount, jstr, value_text};
use crate::linear::{finish_linear_session, push_message, PendingFile};
use crate::sqlite_readonly::{db_error, read_database, record_issue, table_names, SQLITE_MAGIC};
use crate::{FileParse, ParseRequest, Source, SourceError};

/// Version of this parser, stored with every file it read (see `Source::parser_version`).
pub const PARSER_VERSION: u32 = 1;

/// The database's file name.
pub const DB_NAME: &str = "threads.db";
const TITLE_CHARS: usize = 200;
const SHELL_TOOLS: &[&str] = &["terminal"];

/// Zed's agent threads database.
pub struct Zed;

impl Source for Zed {
    fn kind(&self) -> SourceKind {
        SourceKind::Zed
    }

    fn parser_version(&self) -> u32 {
        PARSER_VERSION
    }

    /// Roots are Zed's data folders (holding `threads/threads.db`) or the `threads` folder.
    fn discover(&self, roots: &[PathBuf]) -> Vec<PathBuf> {
        let mut out: Vec<PathBuf> = roots
            .iter()
            .flat_map(|r| [r.join("threads").join(DB_NAME), r.join(DB_NAME)])
            .filter(|p| p.is_file())
            .collect();
        out.sort();
        out.dedup();
        out
    }

    fn detect(&self, path: &Path, head: &[u8]) -> bool {
        path.file_name().is_some_and(|n| n == DB_NAME) && head.starts_with(SQLITE_MAGIC)
    }

    fn appendable(&self, _path: &Path) -> bool {
        false
    }

    fn parse(&self, request: ParseRequest<'_>) -> Result<FileParse, SourceError> {
        let path = request.path;
        read_database(path, |conn| read_db(path, conn))
    }
}

/// One `threads` row, its data decoded.
struct Row {
    id: String,
    summary: Option<String>,
    parent: Option<String>,
    folders: Option<String>,
    created: Option<String>,
    updated: Option<String>,
}

fn read_db(path: &Path, conn: &Connection) -> Result<FileParse, SourceError> {
    let err = |e: rusqlite::Error| db_error(path, &e);
    if !table_names(conn).map_err(err)?.contains("threads") {
        return Err(SourceError::format(
            path,
            "not a Zed threads database: no threads table",
        ));
    }
    let mut stmt = conn
        .prepare("SELECT * FROM threads ORDER BY rowid")
        .map_err(err)?;
    let names: Vec<String> = stmt.column_names().iter().map(|s| s.to_string()).collect();
    let col = |n: &str| names.iter().position(|c| c == n);
    let (c_id, c_type, c_data) = (col("id"), col("data_type"), col("data"));
    let text = |row: &rusqlite::Row<'_>, c: Option<usize>| -> Option<String> {
        c.and_then(|i| row.get::<_, Option<String>>(i).ok().flatten())
            .filter(|s| !s.is_empty())
    };
    let mut out = FileParse::default();
    let mut rows = stmt.query([]).map_err(err)?;
    while let Some(row) = rows.next().map_err(err)? {
        let r = Row {
            id: text(row, c_id).unwrap_or_default(),
            summary: text(row, col("summary")),
            parent: text(row, col("parent_id")),
            folders: text(row, col("folder_paths")),
            created: text(row, col("created_at")).and_then(|t| time::normalize(&t)),
            updated: text(row, col("updated_at")).and_then(|t| time::normalize(&t)),
        };
        let kind = text(row, c_type).unwrap_or_default();
        let data: Vec<u8> = c_data
            .and_then(|i| row.get_ref(i).ok())
            .map(|v| match v {
                rusqlite::types::ValueRef::Blob(b) => b.to_vec(),
                rusqlite::types::ValueRef::Text(t) => t.to_vec(),
                _ => Vec::new(),
            })
            .unwrap_or_default();
        let what = format!("threads row id={}", r.id);
        match decode(&kind, &data) {
            Ok(thread) => out.sessions.push(build_session(r, &thread)),
            Err(reason) => out.issues.push(record_issue(path, &what, "", &reason)),
        }
    }
    Ok(out)
}

/// The thread JSON of a row: zstd-compressed or plain.
fn decode(kind: &str, data: &[u8]) -> Result<Value, String> {
    let json = match kind {
        "zstd" => {
            zstd::decode_all(data).map_err(|e| format!("cannot decompress zstd data: {e}"))?
        }
        "json" => data.to_vec(),
        other => return Err(format!("unknown data_type {other:?}")),
    };
    let v: Value =
        serde_json::from_slice(&json).map_err(|e| format!("invalid thread JSON: {e}"))?;
    if v.is_object() {
        Ok(v)
    } else {
        Err("thread data is not a JSON object".to_string())
    }
}

fn build_session(row: Row, thread: &Value) -> Session {
    let mut meta = SessionMeta::new(
        ids::session_id(SourceKind::Zed, &row.id),
        SourceKind::Zed,
        &row.id,
    );
    meta.title = row
        .summary
        .or_else(|| jstr(thread, "title").map(str::to_string))
        .filter(|t| !t.trim().is_empty());
    meta.cwd = row
        .folders
        .as_deref()
        .and_then(|f| f.lines().find(|l| !l.trim().is_empty()))
        .map(str::to_string);
    let parent = row.parent.or_else(|| {
        thread
            .pointer("/subagent_context/parent_thread_id")
            .and_then(Value::as_str)
            .map(str::to_string)
    });
    if let Some(p) = parent {
        meta.parent = Some(ParentLink {
            session_id: ids::session_id(SourceKind::Zed, &p),
            tool_call_id: None,
            agent_ref: Some(row.id.clone()),
        });
    }
    for ts in [row.created, row.updated].into_iter().flatten() {
        meta.observe_timestamp(&ts);
    }
    let model = thread
        .pointer("/model/model")
        .and_then(Value::as_str)
        .map(str::to_string);
    let mut session = Session::new(meta);
    if let Some(m) = &model {
        session.observe_model(m);
    }
    let mut files = Vec::new();
    let mut first_prompt = None;
    for m in thread
        .get("messages")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if let Some(user) = m.get("User") {
            map_user(&mut session, user, &mut first_prompt);
        } else if let Some(agent) = m.get("Agent") {
            map_agent(&mut session, agent, &model, &mut files);
        }
    }
    if let Some(summary) = jstr(thread, "detailed_summary").filter(|s| !s.is_empty()) {
        let mut m = message(Role::Assistant, MessageKind::Summary, None);
        m.text = summary.to_string();
        push_message(&mut session, m);
    }
    if session.meta.title.is_none() {
        session.meta.title = first_prompt;
    }
    finish_linear_session(&mut session, files, SHELL_TOOLS);
    add_usage(&mut session, thread, &model);
    session
}

fn message(role: Role, kind: MessageKind, native: Option<&str>) -> Message {
    Message::new(role, kind, "").with_native_id(native.map(str::to_string))
}

/// The one key of an externally tagged serde enum value (`{"Text": ...}`), or a bare string
/// variant (`"Resume"`).
fn variant(v: &Value) -> Option<(&str, &Value)> {
    match v {
        Value::Object(o) if o.len() == 1 => o.iter().next().map(|(k, v)| (k.as_str(), v)),
        Value::String(s) => Some((s.as_str(), &Value::Null)),
        _ => None,
    }
}

fn map_user(session: &mut Session, user: &Value, first_prompt: &mut Option<String>) {
    let id = jstr(user, "id");
    let mut texts = Vec::new();
    let mut extras = Vec::new();
    for item in user
        .get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        match variant(item) {
            Some(("Text", v)) => texts.push(value_text(v)),
            Some(("Mention", v)) => {
                extras.push(jstr(v, "uri").map_or_else(|| v.to_string(), str::to_string))
            }
            Some((other, _)) => extras.push(format!("[{other}]")),
            None => extras.push(item.to_string()),
        }
    }
    let text = texts.join("\n");
    if first_prompt.is_none() && !text.trim().is_empty() {
        *first_prompt = Some(truncate_chars(text.trim(), TITLE_CHARS).to_string());
    }
    let mut prompt = message(Role::User, MessageKind::Prompt, id);
    prompt.text = text;
    push_message(session, prompt);
    for e in extras {
        let mut m = message(Role::User, MessageKind::Meta, id);
        m.text = e;
        push_message(session, m);
    }
}

fn map_agent(
    session: &mut Session,
    agent: &Value,
    model: &Option<String>,
    files: &mut Vec<PendingFile>,
) {
    let results = agent.get("tool_results").and_then(Value::as_object);
    for item in agent
        .get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let Some((tag, v)) = variant(item) else {
            continue;
        };
        let mut m = message(Role::Assistant, MessageKind::Text, None);
        m.model = model.clone();
        match tag {
            "Text" => m.text = value_text(v),
            "Thinking" => {
                m.kind = Some(MessageKind::Thinking);
                m.text = jstr(v, "text").unwrap_or("").to_string();
            }
            "RedactedThinking" => {
                m.kind = Some(MessageKind::Thinking);
                m.text = "[redacted thinking]".to_string();
            }
            "ToolUse" => {
                let id = jstr(v, "id").unwrap_or("").to_string();
                map_tool(session, v, &id, results.and_then(|r| r.get(&id)), m, files);
                continue;
            }
            other => {
                m.kind = Some(MessageKind::Unknown);
                m.text = other.to_string();
                m.extra = Some(item.to_string());
            }
        }
        push_message(session, m);
    }
}

fn map_tool(
    session: &mut Session,
    use_: &Value,
    id: &str,
    result: Option<&Value>,
    mut call: Message,
    files: &mut Vec<PendingFile>,
) {
    let name = jstr(use_, "name").map(str::to_string);
    let input = use_
        .get("input")
        .filter(|v| !v.is_null())
        .map(Value::to_string)
        .or_else(|| jstr(use_, "raw_input").map(str::to_string));
    call.kind = Some(MessageKind::ToolCall);
    call.tool_name = name.clone();
    call.tool_call_id = Some(id.to_string());
    call.tool_input = input;
    let path = use_
        .pointer("/input/path")
        .and_then(Value::as_str)
        .map(str::to_string);
    let seq = push_message(session, call);
    if let Some(path) = path {
        files.push(PendingFile {
            seq: Some(seq),
            path,
            tool_name: name.clone(),
            timestamp: None,
        });
    }
    let Some(r) = result else {
        return;
    };
    let mut m = message(Role::Tool, MessageKind::ToolResult, None);
    m.tool_name = jstr(r, "tool_name").map(str::to_string).or(name);
    m.tool_call_id = Some(id.to_string());
    m.is_error = r.get("is_error").and_then(Value::as_bool) == Some(true);
    let mut out = String::new();
    collect_text(r.get("content").unwrap_or(&Value::Null), &mut out);
    if out.is_empty() {
        if let Some(o) = r.get("output").filter(|o| !o.is_null()) {
            out = value_text(o);
        }
    }
    m.tool_output = Some(out);
    push_message(session, m);
}

/// The text of a tool result's content: a string, `{"Text": ...}`, or a list of them.
fn collect_text(v: &Value, out: &mut String) {
    match v {
        Value::String(s) => {
            if !out.is_empty() {
                out.push('\n');
            }
            out.push_str(s);
        }
        Value::Array(a) => a.iter().for_each(|x| collect_text(x, out)),
        Value::Object(o) => {
            if let Some(t) = o.get("Text").or_else(|| o.get("text")) {
                collect_text(t, out);
            }
        }
        _ => {}
    }
}

fn token_usage(key: String, v: &Value, model: &Option<String>) -> Usage {
    let input = jcount(v.get("input_tokens"));
    let output = jcount(v.get("output_tokens"));
    let write = jcount(v.get("cache_creation_input_tokens"));
    let read = jcount(v.get("cache_read_input_tokens"));
    Usage {
        request_key: key,
        model: model.clone(),
        input_tokens: input,
        output_tokens: output,
        cache_creation_tokens: write,
        cache_read_tokens: read,
        tokens_known: crate::shared::blocks::any_count(&[input, output, write, read]),
        ..Usage::default()
    }
}

fn add_usage(session: &mut Session, thread: &Value, model: &Option<String>) {
    let sidechain = session.meta.parent.is_some();
    let mut requests: Vec<Usage> = thread
        .get("request_token_usage")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .map(|(k, v)| {
            let mut u = token_usage(k.clone(), v, model);
            u.message_id = Some(k.clone());
            u.message_seq = session
                .messages
                .iter()
                .find(|m| m.native_id.as_deref() == Some(k) && m.kind() == MessageKind::Prompt)
                .map(|m| m.seq);
            u
        })
        .filter(|u| u.tokens_known)
        .collect();
    if let Some(total) = thread.get("cumulative_token_usage") {
        let total = token_usage("unattributed".to_string(), total, model);
        let sum = |f: fn(&Usage) -> u64| -> u64 { requests.iter().map(f).sum() };
        let rest = Usage {
            input_tokens: total.input_tokens.saturating_sub(sum(|u| u.input_tokens)),
            output_tokens: total.output_tokens.saturating_sub(sum(|u| u.output_tokens)),
            cache_creation_tokens: total
                .cache_creation_tokens
                .saturating_sub(sum(|u| u.cache_creation_tokens)),
            cache_read_tokens: total
                .cache_read_tokens
                .saturating_sub(sum(|u| u.cache_read_tokens)),
            ..total
        };
        if rest.input_tokens
            + rest.output_tokens
            + rest.cache_creation_tokens
            + rest.cache_read_tokens
            > 0
        {
            requests.push(Usage {
                tokens_known: true,
                ..rest
            });
        }
    }
    for mut u in requests {
        u.is_sidechain = sidechain;
        u.timestamp = session.meta.updated_at.clone();
        session.usage.push(u);
    }
}
