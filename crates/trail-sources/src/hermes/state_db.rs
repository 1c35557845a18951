//! Hermes Agent's `state.db`: table `sessions` (one row a session: source, model, parent,
//! start and end as epoch seconds, token and cost totals, title, folder, git branch) and table
//! `messages` (one row a message, in `id` order; `tool_calls` is JSON text; `active = 0` marks
//! a message a rewind removed, `_compressed_summary = 1` a compaction summary). Columns are
//! read by name, so older schema versions without some of them still read. The database runs
//! in WAL mode: it is opened read-only with its WAL, or from a private copy when busy.
//!
//! # Usage rule
//! Per model from `session_model_usage` when the session has rows there (one usage row each,
//! keyed `model:<model>:<task>`), else one row keyed `session` from the session's totals.
//! Cost: `actual_cost_usd` when Hermes has it, else `estimated_cost_usd`. Counts are stored as
//! Hermes records them (input, output, cache reads, cache writes, reasoning).

use std::path::Path;

use rusqlite::{Connection, Row};
use serde_json::{Map, Value};
use trail_model::{
    turns, MessageKind, ParentLink, Role, Session, SessionMeta, SourceKind, TitleRank, UpdateMode,
    Usage,
};

use crate::json_fields::{jcount, jstr};
use crate::openai_chat::{derive_files_and_refs, ChatReader};
use crate::sqlite_readonly::{
    cell_json, column_names, db_error, open_direct, read_database, table_names,
};
use crate::{ids, FileParse, SourceError};

const TITLE_CHARS: usize = 200;

/// Returns whether the database at `path` is Hermes' (tables `sessions` and `messages`, the
/// latter with `tool_calls`).
pub(crate) fn is_hermes_db(path: &Path) -> bool {
    let Ok(conn) = open_direct(path) else {
        return false;
    };
    let has_tables =
        table_names(&conn).is_ok_and(|t| t.contains("sessions") && t.contains("messages"));
    has_tables
        && column_names(&conn, "messages").is_ok_and(|c| c.contains("tool_calls"))
        && column_names(&conn, "sessions").is_ok_and(|c| c.contains("source"))
}

/// The ids of the sessions the database holds (empty when it cannot be read).
pub(crate) fn session_ids(path: &Path) -> std::collections::HashSet<String> {
    let Ok(conn) = open_direct(path) else {
        return Default::default();
    };
    let ids = conn.prepare("SELECT id FROM sessions").and_then(|mut st| {
        st.query_map([], |r| r.get::<_, String>(0))?
            .collect::<rusqlite::Result<std::collections::HashSet<String>>>()
    });
    ids.unwrap_or_default()
}

pub(crate) fn parse(path: &Path) -> Result<FileParse, SourceError> {
    read_database(path, |conn| read_sessions(path, conn))
}

/// A row as a JSON object, column name -> value.
fn row_object(row: &Row<'_>, names: &[String]) -> Map<String, Value> {
    let mut o = Map::new();
    for (i, n) in names.iter().enumerate() {
        if let Ok(v) = row.get_ref(i) {
            o.insert(n.clone(), cell_json(v));
        }
    }
    o
}

fn query_objects(
    conn: &Connection,
    sql: &str,
    param: Option<&str>,
) -> rusqlite::Result<Vec<Map<String, Value>>> {
    let mut stmt = conn.prepare_cached(sql)?;
    let names: Vec<String> = stmt.column_names().iter().map(|s| s.to_string()).collect();
    let mut rows = match param {
        Some(p) => stmt.query([p])?,
        None => stmt.query([])?,
    };
    let mut out = Vec::new();
    while let Some(r) = rows.next()? {
        out.push(row_object(r, &names));
    }
    Ok(out)
}

fn read_sessions(path: &Path, conn: &Connection) -> Result<FileParse, SourceError> {
    let err = |e: rusqlite::Error| db_error(path, &e);
    let tables = table_names(conn).map_err(err)?;
    let mut out = FileParse::default();
    if !(tables.contains("sessions") && tables.contains("messages")) {
        return Ok(out);
    }
    let by_model = tables.contains("session_model_usage");
    let sessions =
        query_objects(conn, "SELECT * FROM sessions ORDER BY rowid", None).map_err(err)?;
    for s in sessions {
        let Some(id) = s.get("id").and_then(Value::as_str).map(str::to_string) else {
            continue;
        };
        let messages = query_objects(
            conn,
            "SELECT * FROM messages WHERE session_id = ?1 ORDER BY id",
            Some(&id),
        )
        .map_err(err)?;
        let model_rows = if by_model {
            query_objects(
                conn,
                "SELECT * FROM session_model_usage WHERE session_id = ?1 ORDER BY rowid",
                Some(&id),
            )
            .map_err(err)?
        } else {
            Vec::new()
        };
        out.sessions.push(build_session(
            &id,
            &Value::Object(s),
            &messages,
            &model_rows,
        ));
    }
    Ok(out)
}

fn build_session(
    id: &str,
    s: &Value,
    rows: &[Map<String, Value>],
    model_rows: &[Map<String, Value>],
) -> Session {
    let mut session = Session::new(session_meta(id, s));
    session.mode = UpdateMode::Replace;
    let model = jstr(s, "model")
        .filter(|m| !m.is_empty())
        .map(str::to_string);
    let mut chat = ChatReader::default();
    let mut order = Vec::new();
    for row in rows {
        let rec = Value::Object(row.clone());
        let active = rec.get("active").and_then(Value::as_i64) != Some(0)
            || rec.get("compacted").and_then(Value::as_i64) == Some(1);
        let summary = rec.get("_compressed_summary").and_then(Value::as_i64) == Some(1);
        for mut m in super::messages_of(&mut chat, &rec) {
            if summary && m.role == Some(Role::User) {
                m.kind = Some(MessageKind::Summary);
            }
            if m.role == Some(Role::Assistant) {
                m.model.clone_from(&model);
            }
            if let Some(t) = &m.timestamp {
                session.meta.observe_timestamp(t);
            }
            m.seq = u32::try_from(session.messages.len()).unwrap_or(u32::MAX);
            m.native_id = rec.get("id").map(Value::to_string);
            if active {
                order.push(session.messages.len());
                m.on_main_chain = true;
            }
            session.messages.push(m);
        }
    }
    if let Some(m) = &model {
        session.observe_model(m);
    }
    session.turn_count = turns::assign_turn_indexes(&mut session.messages, &order);
    session.turns = turns::build_turns(&session.messages);
    derive_files_and_refs(&mut session, super::SHELL_TOOLS);
    if session.meta.title.is_none() {
        session.meta.title = session
            .messages
            .iter()
            .find(|m| m.kind == Some(MessageKind::Prompt) && !m.text.trim().is_empty())
            .map(|m| trail_model::truncate_chars(m.text.trim(), TITLE_CHARS).to_string());
        session.meta.title_rank = TitleRank::FIRST_PROMPT;
    }
    session.usage = usage_rows(s, model_rows, model.as_deref());
    let usage_models: Vec<String> = session
        .usage
        .iter()
        .filter_map(|u| u.model.clone())
        .collect();
    for m in &usage_models {
        session.observe_model(m);
    }
    session
}

fn session_meta(id: &str, s: &Value) -> SessionMeta {
    let get = |k: &str| jstr(s, k).filter(|v| !v.is_empty());
    let mut meta = SessionMeta::new(
        ids::session_id(SourceKind::Hermes, id),
        SourceKind::Hermes,
        id,
    );
    meta.cwd = get("cwd").map(str::to_string);
    meta.branch = get("git_branch").map(str::to_string);
    for k in ["started_at", "ended_at", "last_activity_at"] {
        if let Some(t) = s
            .get(k)
            .filter(|v| v.is_number())
            .and_then(super::timestamp)
        {
            meta.observe_timestamp(&t);
        }
    }
    if let Some(title) = get("title") {
        meta.title = Some(trail_model::truncate_chars(title, TITLE_CHARS).to_string());
        meta.title_rank = match get("title_source") {
            Some("user") => TitleRank::USER,
            Some("llm") => TitleRank::SUMMARY,
            _ => TitleRank::FIRST_PROMPT,
        };
    }
    meta.parent = get("parent_session_id").map(|p| ParentLink {
        session_id: ids::session_id(SourceKind::Hermes, p),
        tool_call_id: None,
        agent_ref: None,
    });
    let mut facts = Map::new();
    for k in ["source", "end_reason", "billing_provider"] {
        if let Some(v) = get(k) {
            facts.insert(k.into(), Value::String(v.to_string()));
        }
    }
    meta.metadata = (!facts.is_empty()).then_some(Value::Object(facts));
    meta
}

fn cost_of(v: &Value) -> Option<f64> {
    ["actual_cost_usd", "estimated_cost_usd"]
        .iter()
        .filter_map(|k| v.get(*k).and_then(Value::as_f64))
        .find(|c| c.is_finite() && *c > 0.0)
}

fn usage_from(v: &Value, key: String, model: Option<String>, ts: Option<String>) -> Usage {
    let n = |k: &str| jcount(v.get(k));
    let (input, output) = (n("input_tokens"), n("output_tokens"));
    let (read, write) = (n("cache_read_tokens"), n("cache_write_tokens"));
    Usage {
        request_key: key,
        model,
        timestamp: ts,
        input_tokens: input,
        output_tokens: output,
        cache_read_tokens: read,
        cache_creation_tokens: write,
        reasoning_tokens: n("reasoning_tokens"),
        cost_usd: cost_of(v),
        tokens_known: crate::shared::blocks::any_count(&[input, output, read, write]),
        ..Usage::default()
    }
}

fn usage_rows(s: &Value, model_rows: &[Map<String, Value>], model: Option<&str>) -> Vec<Usage> {
    let ended = ["ended_at", "last_activity_at", "started_at"]
        .iter()
        .find_map(|k| {
            s.get(*k)
                .filter(|v| v.is_number())
                .and_then(super::timestamp)
        });
    if model_rows.is_empty() {
        let total = usage_from(s, "session".into(), model.map(str::to_string), ended);
        return if total.tokens_known || total.cost_usd.is_some() {
            vec![total]
        } else {
            Vec::new()
        };
    }
    model_rows
        .iter()
        .map(|r| {
            let v = Value::Object(r.clone());
            let m = jstr(&v, "model").unwrap_or("").to_string();
            let task = jstr(&v, "task").unwrap_or("");
            let ts = v
                .get("last_seen")
                .filter(|x| x.is_number())
                .and_then(super::timestamp)
                .or_else(|| ended.clone());
            let model = Some(m.clone()).filter(|m| !m.is_empty());
            usage_from(&v, format!("model:{m}:{task}"), model, ts)
        })
        .collect()
}
