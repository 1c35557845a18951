//! Crush: per-project SQLite databases found through `projects.json`.
//!
//! No Crush database is in the shared corpus (the public ones carry no licence): the database
//! here is built in the test from SQL written from Crush's published schema
//! (`charmbracelet/crush`, `internal/db/migrations/`, the initial tables plus the later
//! `provider` and `summary_message_id` columns) and its parts' JSON
//! (`internal/message/content.go`). Times are Unix seconds, as Crush writes them. The last
//! turn is left in the WAL, as a running Crush leaves it.

mod common;

use std::path::{Path, PathBuf};

use rusqlite::{params, Connection};
use serde_json::json;
use trail_model::{MessageKind, SourceKind};
use trail_sources::crush::{Crush, SNAPSHOT_ORIGIN};
use trail_sources::Source;

const SCHEMA: &str = "
CREATE TABLE sessions (
  id TEXT PRIMARY KEY, parent_session_id TEXT, title TEXT NOT NULL,
  message_count INTEGER NOT NULL DEFAULT 0, prompt_tokens INTEGER NOT NULL DEFAULT 0,
  completion_tokens INTEGER NOT NULL DEFAULT 0, cost REAL NOT NULL DEFAULT 0.0,
  updated_at INTEGER NOT NULL, created_at INTEGER NOT NULL, summary_message_id TEXT);
CREATE TABLE files (
  id TEXT PRIMARY KEY, session_id TEXT NOT NULL, path TEXT NOT NULL, content TEXT NOT NULL,
  version INTEGER NOT NULL DEFAULT 0, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL,
  UNIQUE(path, session_id, version));
CREATE TABLE messages (
  id TEXT PRIMARY KEY, session_id TEXT NOT NULL, role TEXT NOT NULL,
  parts BLOB NOT NULL DEFAULT '[]', model TEXT, created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL, finished_at INTEGER, provider TEXT);
";

const PARENT: &str = "3f2b9c1e-5d4a-4e8b-9c7d-1a2b3c4d5e6f";
/// The sub-agent's session id is the `agent` call's id, as Crush makes it.
const CHILD: &str = "call_agent_01";
const T0: i64 = 1_757_360_294;

fn msg(conn: &Connection, id: &str, session: &str, role: &str, t: i64, parts: serde_json::Value) {
    let model = (role == "assistant").then_some("openrouter/sonoma-sky-alpha");
    conn.execute(
        "INSERT INTO messages VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6, ?6, 'openrouter')",
        params![id, session, role, parts.to_string(), model, t],
    )
    .unwrap();
}

fn file(conn: &Connection, id: &str, version: i64, content: &str, t: i64) {
    conn.execute(
        "INSERT INTO files VALUES (?1, ?2, '/work/proj/main.go', ?3, ?4, ?5, ?5)",
        params![id, PARENT, content, version, t],
    )
    .unwrap();
}

fn text(t: &str) -> serde_json::Value {
    json!({"type": "text", "data": {"text": t}})
}

/// `<home>/.local/share/crush/projects.json` naming `<work>/proj`, whose `.crush/crush.db`
/// holds a parent session (two turns, the second in the WAL) and its sub-agent.
fn build(home: &Path, work: &Path) -> PathBuf {
    let project = work.join("proj");
    let data = project.join(".crush");
    std::fs::create_dir_all(&data).unwrap();
    let global = home.join(".local/share/crush");
    std::fs::create_dir_all(&global).unwrap();
    let registry = json!({"projects": [
        {"path": project.display().to_string(), "data_dir": data.display().to_string(),
         "last_accessed": "2025-09-08T19:38:14Z"},
        {"path": "/gone/project", "data_dir": "/gone/project/.crush", "last_accessed": "2025-09-01T00:00:00Z"}
    ]});
    std::fs::write(global.join("projects.json"), registry.to_string()).unwrap();

    let db = data.join("crush.db");
    let conn = Connection::open(&db).unwrap();
    conn.pragma_update(None, "journal_mode", "WAL").unwrap();
    conn.pragma_update(None, "wal_autocheckpoint", 0).unwrap();
    conn.execute_batch(SCHEMA).unwrap();
    conn.execute(
        "INSERT INTO sessions VALUES (?1, NULL, 'Fix the greeting', 6, 1200, 300, 0.0125, ?2, ?3, NULL)",
        params![PARENT, T0 + 40, T0],
    )
    .unwrap();
    conn.execute(
        "INSERT INTO sessions VALUES (?1, ?2, 'New Agent Session', 2, 200, 50, 0.001, ?3, ?3, NULL)",
        params![CHILD, PARENT, T0 + 6],
    )
    .unwrap();
    msg(
        &conn,
        "m1",
        PARENT,
        "user",
        T0,
        json!([text("Make main.go print hello")]),
    );
    msg(
        &conn,
        "m2",
        PARENT,
        "assistant",
        T0 + 2,
        json!([
            {"type": "reasoning", "data": {"thinking": "Read the file first.", "signature": ""}},
            text("Reading main.go."),
            {"type": "tool_call", "data": {"id": "call_view", "name": "view",
                "input": "{\"file_path\":\"/work/proj/main.go\"}", "type": "function", "finished": true}},
            {"type": "tool_call", "data": {"id": "call_edit", "name": "edit",
                "input": "{\"file_path\":\"/work/proj/main.go\",\"old_string\":\"bye\",\"new_string\":\"hello\"}",
                "type": "function", "finished": true}},
            {"type": "tool_call", "data": {"id": CHILD, "name": "agent",
                "input": "{\"prompt\":\"check the tests\"}", "type": "function", "finished": true}},
            {"type": "finish", "data": {"reason": "tool_use", "time": T0 + 3}}
        ]),
    );
    msg(
        &conn,
        "m3",
        PARENT,
        "tool",
        T0 + 4,
        json!([
            {"type": "tool_result", "data": {"tool_call_id": "call_view", "name": "view",
                "content": "package main\n// bye", "metadata": "", "is_error": false}},
            {"type": "tool_result", "data": {"tool_call_id": "call_edit", "name": "edit",
                "content": "edited", "metadata": "", "is_error": false}},
            {"type": "tool_result", "data": {"tool_call_id": CHILD, "name": "agent",
                "content": "tests pass", "metadata": "", "is_error": false}}
        ]),
    );
    msg(
        &conn,
        "c1",
        CHILD,
        "user",
        T0 + 6,
        json!([text("check the tests")]),
    );
    msg(
        &conn,
        "c2",
        CHILD,
        "assistant",
        T0 + 7,
        json!([text("tests pass"),
        {"type": "finish", "data": {"reason": "end_turn", "time": T0 + 8}}]),
    );
    file(&conn, "f0", 0, "package main\n// bye\n", T0 + 3);
    file(&conn, "f1", 1, "package main\n// hello\n", T0 + 3);
    conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE);")
        .unwrap();
    // The second turn stays in the WAL.
    msg(
        &conn,
        "m4",
        PARENT,
        "user",
        T0 + 20,
        json!([text("Now say hello world"),
        {"type": "image_url", "data": {"url": "file:///tmp/shot.png"}}]),
    );
    msg(
        &conn,
        "m5",
        PARENT,
        "assistant",
        T0 + 22,
        json!([
            {"type": "tool_call", "data": {"id": "call_edit2", "name": "edit",
                "input": "{\"file_path\":\"/work/proj/main.go\",\"old_string\":\"hello\",\"new_string\":\"hello world\"}",
                "type": "function", "finished": true}}
        ]),
    );
    msg(
        &conn,
        "m6",
        PARENT,
        "tool",
        T0 + 23,
        json!([
            {"type": "tool_result", "data": {"tool_call_id": "call_edit2", "name": "edit",
                "content": "file modified since last read", "metadata": "", "is_error": true}},
            {"type": "finish", "data": {"reason": "error", "time": T0 + 24, "message": "Provider error", "details": "rate limited"}}
        ]),
    );
    file(&conn, "f2", 2, "package main\n// hello world\n", T0 + 22);
    // Leave the WAL as a running Crush does: no checkpoint on close.
    std::mem::forget(conn);
    assert!(std::fs::metadata(data.join("crush.db-wal")).unwrap().len() > 0);
    db
}

/// Counts with plain SQL through an ordinary connection (which reads the WAL), not the parser:
/// sessions, prompts (user rows), tool_call parts, and the sessions' token totals.
fn sql_counts(db: &Path) -> (usize, usize, usize, u64, u64) {
    let conn = Connection::open(db).unwrap();
    let one = |sql: &str| -> i64 { conn.query_row(sql, [], |r| r.get(0)).unwrap() };
    (
        one("SELECT count(*) FROM sessions") as usize,
        one("SELECT count(*) FROM messages WHERE role = 'user'") as usize,
        one("SELECT count(*) FROM messages, json_each(messages.parts)
             WHERE json_extract(json_each.value, '$.type') = 'tool_call'") as usize,
        one("SELECT sum(prompt_tokens) FROM sessions") as u64,
        one("SELECT sum(completion_tokens) FROM sessions") as u64,
    )
}

#[test]
fn projects_json_leads_to_each_project_database() {
    let tmp = tempfile::tempdir().unwrap();
    let db = build(&tmp.path().join("home"), tmp.path());
    let roots = [tmp.path().join("home/.local/share/crush")];
    assert_eq!(Crush.discover(&roots), vec![db.clone()]);
    // A project folder, or its data folder, given as a root works too.
    assert_eq!(Crush.discover(&[tmp.path().join("proj")]), vec![db.clone()]);
    assert_eq!(
        Crush.discover(&[db.parent().unwrap().to_path_buf()]),
        vec![db.clone()]
    );
    let head = std::fs::read(&db).unwrap();
    assert!(Crush.detect(&db, &head[..100]));
    assert!(!Crush.detect(&db.with_file_name("other.db"), &head[..100]));
}

#[test]
fn a_crush_database_gives_turns_tools_usage_subagents_and_snapshots_with_its_wal() {
    let tmp = tempfile::tempdir().unwrap();
    let db = build(&tmp.path().join("home"), tmp.path());
    let (sessions, prompts, calls, input, output) = sql_counts(&db);
    let fp = common::parse_whole(&Crush, &db).unwrap();
    assert!(fp.issues.is_empty(), "{:?}", fp.issues);
    assert_eq!(fp.sessions.len(), sessions);
    let sum =
        |k: MessageKind| -> usize { fp.sessions.iter().map(|s| common::count_kind(s, k)).sum() };
    assert_eq!(sum(MessageKind::Prompt), prompts);
    assert_eq!(sum(MessageKind::ToolCall), calls);
    let usage: Vec<_> = fp.sessions.iter().flat_map(|s| &s.usage).collect();
    assert_eq!(usage.iter().map(|u| u.input_tokens).sum::<u64>(), input);
    assert_eq!(usage.iter().map(|u| u.output_tokens).sum::<u64>(), output);

    let parent = common::by_native(&fp, PARENT);
    assert_eq!(parent.meta.source, SourceKind::Crush);
    assert_eq!(parent.meta.id.as_str(), PARENT);
    assert_eq!(
        parent.meta.cwd.as_deref(),
        Some(tmp.path().join("proj").to_str().unwrap())
    );
    assert_eq!(
        parent.meta.created_at.as_deref(),
        Some("2025-09-08T19:38:14.000Z")
    );
    // The WAL's turn is there.
    assert_eq!(parent.turn_count, 2);
    assert_eq!(
        parent.models,
        vec!["openrouter/sonoma-sky-alpha".to_string()]
    );
    assert_eq!(common::count_kind(parent, MessageKind::Thinking), 1);
    assert_eq!(common::count_kind(parent, MessageKind::Error), 1);
    assert_eq!(common::count_kind(parent, MessageKind::Meta), 1);
    let failed = parent
        .messages
        .iter()
        .find(|m| {
            m.tool_call_id.as_deref() == Some("call_edit2") && m.kind() == MessageKind::ToolResult
        })
        .unwrap();
    assert!(failed.is_error);
    assert_eq!(parent.usage[0].cost_usd, Some(0.0125));
    assert!(parent.files.iter().any(|f| f.path == "/work/proj/main.go"));
    let call = parent
        .messages
        .iter()
        .find(|m| m.tool_name.as_deref() == Some("agent") && m.kind() == MessageKind::ToolCall)
        .unwrap();
    assert_eq!(call.agent_ref.as_deref(), Some(CHILD));

    let child = common::by_native(&fp, CHILD);
    let link = child.meta.parent.as_ref().unwrap();
    assert_eq!(link.session_id.as_str(), PARENT);
    assert_eq!(link.tool_call_id.as_deref(), Some(CHILD));

    // Three versions of main.go: the first change in turn 0, the second in turn 1, the last
    // version as the session left the file.
    let snaps: Vec<_> = parent
        .snapshots
        .iter()
        .map(|s| (s.version, s.turn_index))
        .collect();
    assert_eq!(snaps, vec![(0, Some(0)), (1, Some(1)), (2, None)]);
    assert!(parent.snapshots.iter().all(|s| s.origin == SNAPSHOT_ORIGIN));
    assert_eq!(
        parent.snapshots[2].content.as_deref(),
        Some("package main\n// hello world\n")
    );
}

#[test]
fn a_bad_parts_row_is_an_issue_and_the_rest_is_kept() {
    let tmp = tempfile::tempdir().unwrap();
    let db = build(&tmp.path().join("home"), tmp.path());
    {
        let conn = Connection::open(&db).unwrap();
        conn.execute(
            "INSERT INTO messages VALUES ('bad', ?1, 'assistant', '{not json', NULL, ?2, ?2, ?2, NULL)",
            params![PARENT, T0 + 30],
        )
        .unwrap();
    }
    let fp = common::parse_whole(&Crush, &db).unwrap();
    assert_eq!(fp.issues.len(), 1);
    assert!(fp.issues[0].reason.contains("parts"));
    assert_eq!(common::by_native(&fp, PARENT).turn_count, 2);
}
