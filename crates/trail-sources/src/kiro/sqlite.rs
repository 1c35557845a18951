//! Kiro CLI's conversation database: `data.sqlite3`, table `conversations_v2` (`key` = the
//! folder the conversation ran in, `conversation_id`, `value` = the conversation state as JSON,
//! `created_at`, `updated_at` in epoch milliseconds). A conversation may sit under several
//! keys; its newest row wins.
//!
//! The state is the one of aws/amazon-q-developer-cli's `ConversationState`: `history` holds
//! `{user, assistant, request_metadata}` entries. `user.content` is `{"Prompt":{prompt}}`,
//! `{"ToolUseResults":{tool_use_results}}` or `{"CancelledToolUses":{prompt,
//! tool_use_results}}` (results `{tool_use_id, content:[{"Text":…}|{"Json":…}], status}`);
//! `assistant` is `{"Response":{message_id, content}}` or `{"ToolUse":{message_id, content,
//! tool_uses:[{id, name, args}]}}`; `request_metadata` names the model and when the answer
//! ended. `latest_summary` holds the summary `/compact` wrote. The state records no token
//! counts.

use std::path::Path;

use rusqlite::Connection;
use serde_json::Value;
use trail_model::{
    time, Message, MessageKind, Role, Session, SessionMeta, SourceKind, TitleRank, UpdateMode,
};

use crate::json_fields::{jstr, value_text};
use crate::linear::{finish_linear_session, push_message};
use crate::openai_chat::input_path;
use crate::sqlite_readonly::{
    cell_text, column_names, db_error, open_direct, read_database, record_issue, table_names,
};
use crate::{ids, FileParse, SourceError};

const TABLE: &str = "conversations_v2";
const TITLE_CHARS: usize = 200;
const SHELL_TOOLS: &[&str] = &["execute_bash", "executeBash", "shell"];

/// Returns whether the database at `path` has Kiro's conversation table.
pub(crate) fn has_conversations(path: &Path) -> bool {
    open_direct(path)
        .ok()
        .and_then(|c| table_names(&c).ok())
        .is_some_and(|t| t.contains(TABLE))
}

pub(crate) fn parse(path: &Path) -> Result<FileParse, SourceError> {
    read_database(path, |conn| read_conversations(path, conn))
}

/// One row: the newest of its conversation.
struct Row {
    key: String,
    id: String,
    value: Option<String>,
    created_at: Option<i64>,
    updated_at: Option<i64>,
}

fn read_conversations(path: &Path, conn: &Connection) -> Result<FileParse, SourceError> {
    let mut out = FileParse::default();
    let tables = table_names(conn).map_err(|e| db_error(path, &e))?;
    if !tables.contains(TABLE) {
        return Ok(out);
    }
    for row in newest_rows(conn).map_err(|e| db_error(path, &e))? {
        let what = format!("{TABLE} {}", row.id);
        let Some(raw) = row.value.as_deref() else {
            continue;
        };
        match serde_json::from_str::<Value>(raw) {
            Ok(v) if v.is_object() => out.sessions.push(build_session(&row, &v)),
            Ok(_) => out
                .issues
                .push(record_issue(path, &what, raw, "not a JSON object")),
            Err(e) => out.issues.push(record_issue(
                path,
                &what,
                raw,
                &format!("invalid JSON: {e}"),
            )),
        }
    }
    Ok(out)
}

fn newest_rows(conn: &Connection) -> rusqlite::Result<Vec<Row>> {
    let cols = column_names(conn, TABLE)?;
    let col = |c: &'static str| if cols.contains(c) { c } else { "NULL" };
    let sql = format!(
        "SELECT {key}, conversation_id, value, {created}, {updated} FROM {TABLE} \
         ORDER BY conversation_id, {updated} DESC",
        key = col("key"),
        created = col("created_at"),
        updated = col("updated_at"),
    );
    let mut stmt = conn.prepare(&sql)?;
    let mut rows = stmt.query([])?;
    let mut out: Vec<Row> = Vec::new();
    while let Some(r) = rows.next()? {
        let id = r.get_ref(1).ok().and_then(cell_text).unwrap_or_default();
        if out.last().is_some_and(|last| last.id == id) {
            continue; // an older copy under another folder
        }
        out.push(Row {
            key: r.get_ref(0).ok().and_then(cell_text).unwrap_or_default(),
            id,
            value: r.get_ref(2).ok().and_then(cell_text),
            created_at: r.get::<_, Option<i64>>(3).ok().flatten(),
            updated_at: r.get::<_, Option<i64>>(4).ok().flatten(),
        });
    }
    Ok(out)
}

fn build_session(row: &Row, v: &Value) -> Session {
    let native = jstr(v, "conversation_id")
        .filter(|s| !s.is_empty())
        .unwrap_or(&row.id)
        .to_string();
    let mut meta = SessionMeta::new(
        ids::session_id(SourceKind::Kiro, &native),
        SourceKind::Kiro,
        &native,
    );
    meta.cwd = Some(row.key.clone())
        .filter(|k| !k.is_empty())
        .or_else(|| first_cwd(v));
    for ms in [row.created_at, row.updated_at].into_iter().flatten() {
        if let Some(t) = time::from_epoch_millis(ms) {
            meta.observe_timestamp(&t);
        }
    }
    let mut session = Session::new(meta);
    session.mode = UpdateMode::Replace;
    let default_model = v
        .pointer("/model_info/model_id")
        .and_then(Value::as_str)
        .or_else(|| jstr(v, "model"))
        .map(str::to_string);
    if let Some(summary) = v
        .get("latest_summary")
        .and_then(|s| s.get(0))
        .and_then(Value::as_str)
    {
        push_message(
            &mut session,
            Message::new(Role::System, MessageKind::Summary, summary.to_string()),
        );
    }
    let history = v.get("history").and_then(Value::as_array);
    for entry in history.into_iter().flatten() {
        entry_messages(&mut session, entry, default_model.as_deref());
    }
    if let Some(m) = &default_model {
        session.observe_model(m);
    }
    name_results(&mut session);
    finish_linear_session(&mut session, Vec::new(), SHELL_TOOLS);
    add_files(&mut session);
    session.meta.title = session
        .messages
        .iter()
        .find(|m| m.kind == Some(MessageKind::Prompt) && !m.text.trim().is_empty())
        .map(|m| trail_model::truncate_chars(m.text.trim(), TITLE_CHARS).to_string());
    session.meta.title_rank = TitleRank::FIRST_PROMPT;
    session
}

fn first_cwd(v: &Value) -> Option<String> {
    v.get("history")?
        .as_array()?
        .iter()
        .find_map(|e| {
            e.pointer("/user/env_context/env_state/current_working_directory")
                .and_then(Value::as_str)
        })
        .map(str::to_string)
}

/// The messages of one history entry: the user side, then the assistant's answer.
fn entry_messages(session: &mut Session, entry: &Value, default_model: Option<&str>) {
    let user = entry.get("user").unwrap_or(&Value::Null);
    let user_ts = user.get("timestamp").and_then(time::from_json);
    let meta = entry.get("request_metadata").unwrap_or(&Value::Null);
    let answer_ts = meta
        .get("stream_end_timestamp_ms")
        .and_then(time::from_json)
        .or_else(|| user_ts.clone());
    let model = jstr(meta, "model_id").or(default_model).map(str::to_string);
    for mut m in user_messages(user.get("content").unwrap_or(&Value::Null)) {
        m.timestamp.clone_from(&user_ts);
        push_message(session, m);
    }
    if let Some(m) = &model {
        session.observe_model(m);
    }
    for mut m in assistant_messages(entry.get("assistant").unwrap_or(&Value::Null)) {
        m.timestamp.clone_from(&answer_ts);
        m.model.clone_from(&model);
        push_message(session, m);
    }
}

fn user_messages(content: &Value) -> Vec<Message> {
    let mut out = Vec::new();
    if let Some(p) = content.get("Prompt") {
        let text = jstr(p, "prompt").unwrap_or("").to_string();
        out.push(Message::new(Role::User, MessageKind::Prompt, text));
    }
    if let Some(c) = content.get("CancelledToolUses") {
        out.extend(tool_results(c, true));
        if let Some(p) = jstr(c, "prompt").filter(|p| !p.is_empty()) {
            out.push(Message::new(Role::User, MessageKind::Prompt, p.to_string()));
        }
    }
    if let Some(r) = content.get("ToolUseResults") {
        out.extend(tool_results(r, false));
    }
    out
}

fn tool_results(v: &Value, cancelled: bool) -> Vec<Message> {
    let results = v.get("tool_use_results").and_then(Value::as_array);
    results
        .into_iter()
        .flatten()
        .map(|r| {
            let blocks = r.get("content").and_then(Value::as_array);
            let texts: Vec<String> = blocks
                .into_iter()
                .flatten()
                .filter_map(|b| {
                    b.get("Text")
                        .map(value_text)
                        .or_else(|| b.get("Json").map(Value::to_string))
                })
                .collect();
            let status = jstr(r, "status").unwrap_or("");
            let mut m = Message::new(Role::Tool, MessageKind::ToolResult, String::new());
            m.tool_call_id = jstr(r, "tool_use_id").map(str::to_string);
            m.tool_output = Some(texts.join("\n"));
            m.is_error = cancelled || status.eq_ignore_ascii_case("error");
            m
        })
        .collect()
}

fn assistant_messages(v: &Value) -> Vec<Message> {
    let (body, calls) = match (v.get("Response"), v.get("ToolUse")) {
        (Some(r), _) => (r, None),
        (None, Some(t)) => (t, t.get("tool_uses").and_then(Value::as_array)),
        (None, None) => return Vec::new(),
    };
    let mut out = Vec::new();
    let native = jstr(body, "message_id").map(str::to_string);
    let text = jstr(body, "content").unwrap_or("");
    if !text.trim().is_empty() {
        out.push(Message::new(
            Role::Assistant,
            MessageKind::Text,
            text.to_string(),
        ));
    }
    for call in calls.into_iter().flatten() {
        let mut m = Message::new(Role::Assistant, MessageKind::ToolCall, String::new());
        m.tool_name = Some(jstr(call, "name").unwrap_or("unknown").to_string());
        m.tool_call_id = jstr(call, "id").map(str::to_string);
        m.tool_input = Some(call.get("args").cloned().unwrap_or(Value::Null).to_string());
        out.push(m);
    }
    for m in &mut out {
        m.native_id.clone_from(&native);
    }
    out
}

/// Gives results their call's tool name.
fn name_results(session: &mut Session) {
    let names: std::collections::HashMap<String, String> = session
        .messages
        .iter()
        .filter(|m| m.kind == Some(MessageKind::ToolCall))
        .filter_map(|m| Some((m.tool_call_id.clone()?, m.tool_name.clone()?)))
        .collect();
    for m in &mut session.messages {
        if m.kind == Some(MessageKind::ToolResult) && m.tool_name.is_none() {
            m.tool_name = m.tool_call_id.as_ref().and_then(|i| names.get(i).cloned());
        }
    }
}

/// Lists the files tool calls name.
fn add_files(session: &mut Session) {
    let touches: Vec<trail_model::FileTouch> = session
        .messages
        .iter()
        .filter(|m| m.kind == Some(MessageKind::ToolCall))
        .filter_map(|m| {
            Some(trail_model::FileTouch {
                path: input_path(m.tool_input.as_deref()?)?,
                tool_name: m.tool_name.clone(),
                turn_index: m.turn_index,
                first_seen_at: m.timestamp.clone(),
            })
        })
        .collect();
    for t in touches {
        session.add_file(t);
    }
}
