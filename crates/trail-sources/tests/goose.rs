//! Goose: `sessions/sessions.db` and the legacy per-session JSONL.
//!
//! No Goose store is public. The database here is built in the test from SQL written from
//! Goose's published schema (`aaif-goose/goose`, `crates/goose/src/session/session_manager.rs`
//! `create_schema`, version 17: `sessions`, `messages`, `usage_ledger`) and its message
//! content JSON (`conversation/message.rs`); the legacy file
//! (`tests/fixtures/goose/sessions/20250101_120000.jsonl`) was written here in the shape
//! `session/legacy.rs` reads.

mod common;

use std::path::{Path, PathBuf};

use rusqlite::{params, Connection};
use serde_json::{json, Value};
use trail_model::{MessageKind, SourceKind};
use trail_sources::goose::Goose;
use trail_sources::Source;

const SCHEMA: &str = "
CREATE TABLE sessions (
  id TEXT PRIMARY KEY, name TEXT NOT NULL DEFAULT '', description TEXT NOT NULL DEFAULT '',
  user_set_name BOOLEAN DEFAULT FALSE, session_type TEXT NOT NULL DEFAULT 'user',
  working_dir TEXT NOT NULL, created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
  updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP, extension_data TEXT DEFAULT '{}',
  total_tokens INTEGER, input_tokens INTEGER, output_tokens INTEGER, cache_read_tokens INTEGER,
  cache_write_tokens INTEGER, accumulated_total_tokens INTEGER, accumulated_input_tokens INTEGER,
  accumulated_output_tokens INTEGER, accumulated_cache_read_tokens INTEGER,
  accumulated_cache_write_tokens INTEGER, accumulated_cost REAL, schedule_id TEXT,
  recipe_json TEXT, user_recipe_values_json TEXT, provider_name TEXT, model_config_json TEXT,
  goose_mode TEXT NOT NULL DEFAULT 'auto', archived_at TIMESTAMP, project_id TEXT,
  parent_session_id TEXT, parent_delegation TEXT);
CREATE TABLE messages (
  id INTEGER PRIMARY KEY AUTOINCREMENT, message_id TEXT, session_id TEXT NOT NULL,
  role TEXT NOT NULL, content_json TEXT NOT NULL, created_timestamp INTEGER NOT NULL,
  timestamp TIMESTAMP DEFAULT CURRENT_TIMESTAMP, tokens INTEGER, metadata_json TEXT);
CREATE TABLE usage_ledger (
  id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL, created_timestamp INTEGER NOT NULL,
  model TEXT, input_tokens INTEGER, output_tokens INTEGER, total_tokens INTEGER,
  cache_read_tokens INTEGER, cache_write_tokens INTEGER, cost REAL, cost_source TEXT,
  is_compaction INTEGER DEFAULT 0);
";

const T0: i64 = 1_767_225_600;

fn msg(conn: &Connection, session: &str, role: &str, t: i64, content: Value, visible: bool) {
    conn.execute(
        "INSERT INTO messages (message_id, session_id, role, content_json, created_timestamp, metadata_json)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![
            format!("m{t}"),
            session,
            role,
            content.to_string(),
            t,
            json!({"userVisible": visible, "agentVisible": true}).to_string()
        ],
    )
    .unwrap();
}

fn build(data: &Path) -> PathBuf {
    let dir = data.join("sessions");
    std::fs::create_dir_all(&dir).unwrap();
    let db = dir.join("sessions.db");
    let conn = Connection::open(&db).unwrap();
    conn.execute_batch(SCHEMA).unwrap();
    conn.execute(
        "INSERT INTO sessions (id, name, working_dir, created_at, updated_at, provider_name,
           model_config_json, accumulated_input_tokens, accumulated_output_tokens, accumulated_cost)
         VALUES ('20260101_1', 'Tidy the README', '/home/demo/proj', '2026-01-01 00:00:00',
           '2026-01-01 00:05:00', 'anthropic', '{\"model_name\":\"claude-sonnet-4-5\"}', 2100, 260, 0.02)",
        [],
    )
    .unwrap();
    conn.execute(
        "INSERT INTO sessions (id, name, session_type, working_dir, created_at, updated_at,
           accumulated_input_tokens, accumulated_output_tokens, parent_session_id)
         VALUES ('20260101_2', 'Check links', 'sub_agent', '/home/demo/proj', '2026-01-01 00:01:00',
           '2026-01-01 00:02:00', 300, 20, '20260101_1')",
        [],
    )
    .unwrap();
    let p = "20260101_1";
    msg(
        &conn,
        p,
        "user",
        T0,
        json!([{"type": "text", "text": "Tidy the README"}]),
        true,
    );
    msg(
        &conn,
        p,
        "assistant",
        T0 + 5,
        json!([
            {"type": "thinking", "thinking": "Look at it first.", "signature": "s"},
            {"type": "text", "text": "Reading it."},
            {"type": "toolRequest", "id": "t1", "toolCall": {"status": "success",
                "value": {"name": "developer__text_editor", "arguments": {"command": "view", "path": "/home/demo/proj/README.md"}}}},
            {"type": "toolRequest", "id": "t2", "toolCall": {"status": "success",
                "value": {"name": "developer__shell", "arguments": {"command": "markdownlint README.md"}}}}
        ]),
        true,
    );
    msg(
        &conn,
        p,
        "user",
        T0 + 6,
        json!([
            {"type": "toolResponse", "id": "t1", "toolResult": {"status": "success", "value": [{"type": "text", "text": "# Proj"}]}},
            {"type": "toolResponse", "id": "t2", "toolResult": {"status": "error", "error": "command not found: markdownlint"}}
        ]),
        true,
    );
    msg(
        &conn,
        p,
        "user",
        T0 + 7,
        json!([{"type": "text", "text": "Context was summarized."}]),
        false,
    );
    msg(
        &conn,
        p,
        "user",
        T0 + 10,
        json!([{"type": "text", "text": "Now check the links"}]),
        true,
    );
    msg(
        &conn,
        p,
        "assistant",
        T0 + 12,
        json!([{"type": "text", "text": "All links work."}]),
        true,
    );
    let c = "20260101_2";
    msg(
        &conn,
        c,
        "user",
        T0 + 60,
        json!([{"type": "text", "text": "Check every link"}]),
        true,
    );
    msg(
        &conn,
        c,
        "assistant",
        T0 + 61,
        json!([{"type": "text", "text": "Done."}]),
        true,
    );
    for (t, i, o, r) in [(T0 + 5, 1000, 120, 400), (T0 + 12, 1100, 140, 900)] {
        conn.execute(
            "INSERT INTO usage_ledger (session_id, created_timestamp, model, input_tokens, output_tokens,
               total_tokens, cache_read_tokens, cache_write_tokens, cost, cost_source)
             VALUES (?1, ?2, 'claude-sonnet-4-5', ?3, ?4, ?5, ?6, 0, 0.01, 'provider')",
            params![p, t, i, o, i + o, r],
        )
        .unwrap();
    }
    db
}

/// Counts with plain SQL, not the parser: sessions; visible user text items (prompts);
/// toolRequest items; tokens from the ledger where a session has rows, else its accumulated
/// totals.
fn sql_counts(db: &Path) -> (usize, usize, usize, u64, u64) {
    let conn = Connection::open(db).unwrap();
    let one = |sql: &str| -> i64 { conn.query_row(sql, [], |r| r.get(0)).unwrap() };
    let tok = |col: &str| -> u64 {
        one(&format!(
            "SELECT (SELECT coalesce(sum({col}), 0) FROM usage_ledger)
                  + (SELECT coalesce(sum(accumulated_{col}), 0) FROM sessions s
                     WHERE NOT EXISTS (SELECT 1 FROM usage_ledger u WHERE u.session_id = s.id))"
        )) as u64
    };
    (
        one("SELECT count(*) FROM sessions") as usize,
        one(
            "SELECT count(*) FROM messages, json_each(messages.content_json)
             WHERE role = 'user' AND json_extract(json_each.value, '$.type') = 'text'
               AND json_extract(metadata_json, '$.userVisible') = 1",
        ) as usize,
        one(
            "SELECT count(*) FROM messages, json_each(messages.content_json)
             WHERE json_extract(json_each.value, '$.type') = 'toolRequest'",
        ) as usize,
        tok("input_tokens"),
        tok("output_tokens"),
    )
}

#[test]
fn goose_database_gives_turns_tools_ledger_usage_and_subagents() {
    let tmp = tempfile::tempdir().unwrap();
    let db = build(&tmp.path().join("goose"));
    assert_eq!(
        Goose.discover(&[tmp.path().join("goose")]),
        vec![db.clone()]
    );
    let head = std::fs::read(&db).unwrap();
    assert!(Goose.detect(&db, &head[..100]));
    let (sessions, prompts, calls, input, output) = sql_counts(&db);
    let fp = common::parse_whole(&Goose, &db).unwrap();
    assert!(fp.issues.is_empty(), "{:?}", fp.issues);
    assert_eq!(fp.sessions.len(), sessions);
    let sum =
        |k: MessageKind| -> usize { fp.sessions.iter().map(|s| common::count_kind(s, k)).sum() };
    assert_eq!(sum(MessageKind::Prompt), prompts);
    assert_eq!(sum(MessageKind::ToolCall), calls);
    let usage: Vec<_> = fp.sessions.iter().flat_map(|s| &s.usage).collect();
    assert_eq!(usage.iter().map(|u| u.input_tokens).sum::<u64>(), input);
    assert_eq!(usage.iter().map(|u| u.output_tokens).sum::<u64>(), output);

    let parent = common::by_native(&fp, "20260101_1");
    assert_eq!(parent.meta.source, SourceKind::Goose);
    assert_eq!(parent.meta.id.as_str(), "goose:20260101_1");
    assert_eq!(parent.meta.cwd.as_deref(), Some("/home/demo/proj"));
    assert_eq!(
        parent.meta.created_at.as_deref(),
        Some("2026-01-01T00:00:00.000Z")
    );
    assert_eq!(parent.turn_count, 2);
    assert_eq!(parent.models, vec!["claude-sonnet-4-5".to_string()]);
    assert_eq!(parent.usage.len(), 2);
    assert_eq!(common::count_kind(parent, MessageKind::Thinking), 1);
    assert_eq!(common::count_kind(parent, MessageKind::Meta), 1);
    let failed = parent
        .messages
        .iter()
        .find(|m| m.kind() == MessageKind::ToolResult && m.tool_call_id.as_deref() == Some("t2"))
        .unwrap();
    assert!(failed.is_error);
    assert_eq!(failed.tool_name.as_deref(), Some("developer__shell"));
    assert!(parent
        .files
        .iter()
        .any(|f| f.path == "/home/demo/proj/README.md"));
    let child = common::by_native(&fp, "20260101_2");
    assert_eq!(
        child.meta.parent.as_ref().unwrap().session_id.as_str(),
        "goose:20260101_1"
    );
    assert!(child.usage.iter().all(|u| u.is_sidechain));
}

#[test]
fn goose_legacy_jsonl_is_read() {
    let dir = common::fixtures("goose");
    let found = Goose.discover(std::slice::from_ref(&dir));
    assert_eq!(found.len(), 1);
    let file = &found[0];
    let head = std::fs::read(file).unwrap();
    assert!(Goose.detect(file, &head));
    // Independent counts by plain JSON reads of the lines after the metadata line.
    let text = std::fs::read_to_string(file).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let items = || {
        lines[1..]
            .iter()
            .flat_map(|m| m["content"].as_array().unwrap().iter().map(move |c| (m, c)))
    };
    let prompts = items()
        .filter(|(m, c)| m["role"] == "user" && c["type"] == "text")
        .count();
    let calls = items().filter(|(_, c)| c["type"] == "toolRequest").count();
    let fp = common::parse_whole(&Goose, file).unwrap();
    assert!(fp.issues.is_empty(), "{:?}", fp.issues);
    let s = common::only(&fp);
    assert_eq!(common::count_kind(s, MessageKind::Prompt), prompts);
    assert_eq!(common::count_kind(s, MessageKind::ToolCall), calls);
    assert_eq!(s.meta.cwd.as_deref(), Some("/home/demo/site"));
    assert_eq!(s.meta.title.as_deref(), Some("Add a footer"));
    let input: u64 = s.usage.iter().map(|u| u.input_tokens).sum();
    assert_eq!(
        input,
        lines[0]["accumulated_input_tokens"].as_u64().unwrap()
    );
    // With a database in the same folder, the legacy files are not listed again.
    let tmp = tempfile::tempdir().unwrap();
    let db = build(tmp.path());
    std::fs::copy(file, db.with_file_name("20250101_120000.jsonl")).unwrap();
    assert_eq!(Goose.discover(&[tmp.path().to_path_buf()]), vec![db]);
}
