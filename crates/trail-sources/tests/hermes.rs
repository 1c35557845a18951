//! Hermes Agent: the state database (built here from SQL), the legacy session files of the
//! corpus and of the fixtures.
//!
//! The corpus `*.rows.jsonl` files are `messages` rows exported from real `state.db` files by
//! the Irrlicht recorder, not files Hermes writes (corpus SOURCES.md). Each test database is
//! built from them: the `sessions` and `messages` tables are created with the columns of
//! NousResearch/hermes-agent `hermes_state_common.py` (`SCHEMA_SQL`) that trail reads, one
//! session per rows file, one message row per line (empty strings stored as NULL, `_ts` as the
//! epoch `timestamp`). Counts are made from the rows files without the parser, with plain
//! `serde_json`: prompts are `user` rows, tool calls the entries of the `tool_calls` JSON
//! text, results the `tool` rows. The rows hold no token counts.

mod common;

use std::path::{Path, PathBuf};

use rusqlite::{params, Connection};
use serde_json::Value;
use trail_model::{MessageKind, TitleRank};
use trail_sources::hermes::Hermes;
use trail_sources::Source;

use common::{by_native, count_kind, only, parse_whole};

/// The tables trail reads, with the columns Hermes creates (a subset of its schema).
const SCHEMA: &str = "
CREATE TABLE sessions (
    id TEXT PRIMARY KEY, source TEXT NOT NULL, model TEXT, model_config TEXT,
    parent_session_id TEXT, started_at REAL NOT NULL, ended_at REAL, end_reason TEXT,
    message_count INTEGER DEFAULT 0, input_tokens INTEGER DEFAULT 0,
    output_tokens INTEGER DEFAULT 0, cache_read_tokens INTEGER DEFAULT 0,
    cache_write_tokens INTEGER DEFAULT 0, reasoning_tokens INTEGER DEFAULT 0, cwd TEXT,
    git_branch TEXT, estimated_cost_usd REAL, actual_cost_usd REAL, title TEXT,
    title_source TEXT, last_activity_at REAL
);
CREATE TABLE messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL REFERENCES sessions(id),
    role TEXT NOT NULL, content TEXT, tool_call_id TEXT, tool_calls TEXT, tool_name TEXT,
    timestamp REAL NOT NULL, finish_reason TEXT, reasoning TEXT, reasoning_content TEXT,
    _compressed_summary INTEGER NOT NULL DEFAULT 0, active INTEGER NOT NULL DEFAULT 1,
    compacted INTEGER NOT NULL DEFAULT 0, display_kind TEXT
);
CREATE TABLE session_model_usage (
    session_id TEXT NOT NULL, model TEXT NOT NULL, task TEXT NOT NULL DEFAULT '',
    input_tokens INTEGER NOT NULL DEFAULT 0, output_tokens INTEGER NOT NULL DEFAULT 0,
    cache_read_tokens INTEGER NOT NULL DEFAULT 0, cache_write_tokens INTEGER NOT NULL DEFAULT 0,
    reasoning_tokens INTEGER NOT NULL DEFAULT 0, estimated_cost_usd REAL NOT NULL DEFAULT 0,
    actual_cost_usd REAL NOT NULL DEFAULT 0, last_seen REAL,
    PRIMARY KEY (session_id, model, task)
);
";

fn rows_of(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Loads a corpus rows file into `conn` as session `id`.
fn load_rows(conn: &Connection, id: &str, rows: &[Value]) {
    let ts = |r: &Value| {
        r["_ts"]
            .as_f64()
            .or_else(|| r["_ts"].as_str()?.parse().ok())
            .unwrap()
    };
    let nonempty = |r: &Value, k: &str| r[k].as_str().filter(|s| !s.is_empty()).map(str::to_string);
    conn.execute(
        "INSERT INTO sessions (id, source, model, started_at, ended_at) VALUES (?1, 'cli', ?2, ?3, ?4)",
        params![id, rows[0]["_model"].as_str(), ts(&rows[0]), ts(rows.last().unwrap())],
    )
    .unwrap();
    for r in rows {
        conn.execute(
            "INSERT INTO messages (session_id, role, content, tool_call_id, tool_calls, tool_name,
                                   timestamp, finish_reason, display_kind)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            params![
                id,
                r["role"].as_str(),
                r["content"].as_str(),
                nonempty(r, "tool_call_id"),
                nonempty(r, "tool_calls"),
                nonempty(r, "tool_name"),
                ts(r),
                nonempty(r, "finish_reason"),
                nonempty(r, "display_kind"),
            ],
        )
        .unwrap();
    }
}

/// Builds `<dir>/state.db` from every rows file of the corpus; returns it and the files.
fn corpus_database(dir: &Path) -> Option<(PathBuf, Vec<PathBuf>)> {
    let corpus = common::shared_corpus("hermes")?;
    let files: Vec<PathBuf> = common::files_in(&corpus)
        .into_iter()
        .filter(|p| p.to_string_lossy().ends_with(".rows.jsonl"))
        .collect();
    let db = dir.join("state.db");
    let conn = Connection::open(&db).unwrap();
    conn.execute_batch(SCHEMA).unwrap();
    for f in &files {
        let id = f
            .file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .trim_end_matches(".rows.jsonl");
        load_rows(&conn, id, &rows_of(f));
    }
    Some((db, files))
}

#[test]
fn the_corpus_rows_read_back_from_a_state_database_as_counted_without_the_parser() {
    let dir = tempfile::tempdir().unwrap();
    let Some((db, files)) = corpus_database(dir.path()) else {
        return;
    };
    assert_eq!(files.len(), 2);
    assert_eq!(
        Hermes.discover(&[dir.path().to_path_buf()]),
        std::slice::from_ref(&db)
    );
    assert!(Hermes.detect(&db, &std::fs::read(&db).unwrap()[..100]));
    let fp = parse_whole(&Hermes, &db).unwrap();
    assert!(fp.issues.is_empty(), "{:?}", fp.issues);
    assert_eq!(fp.sessions.len(), files.len());
    for f in &files {
        let rows = rows_of(f);
        let id = f
            .file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .trim_end_matches(".rows.jsonl");
        let s = by_native(&fp, id);
        let prompts = rows.iter().filter(|r| r["role"] == "user").count();
        let calls: usize = rows
            .iter()
            .filter_map(|r| r["tool_calls"].as_str().filter(|t| !t.is_empty()))
            .map(|t| serde_json::from_str::<Vec<Value>>(t).unwrap().len())
            .sum();
        let results = rows.iter().filter(|r| r["role"] == "tool").count();
        assert_eq!(count_kind(s, MessageKind::Prompt), prompts, "{id}");
        assert_eq!(s.turn_count as usize, prompts, "{id}");
        assert_eq!(count_kind(s, MessageKind::ToolCall), calls, "{id}");
        assert_eq!(count_kind(s, MessageKind::ToolResult), results, "{id}");
        assert!(s.usage.is_empty(), "no token counts in the rows");
        assert_eq!(s.models, [rows[0]["_model"].as_str().unwrap()]);
        assert_eq!(s.meta.id.as_str(), format!("hermes:{id}"));
        let first_ts = rows[0]["timestamp"].as_str().unwrap();
        assert_eq!(s.meta.created_at.as_deref(), Some(first_ts));
    }
    let tools = by_native(&fp, "auto-executed-tool-call");
    let result = tools
        .messages
        .iter()
        .find(|m| m.kind() == MessageKind::ToolResult)
        .unwrap();
    assert_eq!(result.tool_name.as_deref(), Some("skills_list"));
    assert!(!result.is_error);
}

#[test]
fn the_legacy_corpus_json_is_read() {
    let Some(corpus) = common::shared_corpus("hermes") else {
        return;
    };
    let f = corpus.join("legacy-large.json");
    let head = std::fs::read(&f).unwrap();
    assert!(Hermes.detect(&f, &head));
    let fp = parse_whole(&Hermes, &f).unwrap();
    assert!(fp.issues.is_empty());
    let s = only(&fp);
    // Counted with serde_json: `messages` holds 1 user, 1 `tool_calls` entry, 1 tool message.
    let v: Value = serde_json::from_slice(&head).unwrap();
    let msgs = v["messages"].as_array().unwrap();
    let of_role = |r: &str| msgs.iter().filter(|m| m["role"] == r).count();
    let calls: usize = msgs
        .iter()
        .map(|m| m["tool_calls"].as_array().map_or(0, Vec::len))
        .sum();
    assert_eq!(count_kind(s, MessageKind::Prompt), of_role("user"));
    assert_eq!(count_kind(s, MessageKind::ToolCall), calls);
    assert_eq!(count_kind(s, MessageKind::ToolResult), of_role("tool"));
    assert_eq!(count_kind(s, MessageKind::Thinking), 1);
    assert_eq!(s.meta.id.as_str(), "hermes:20260429_hermes_large");
    assert_eq!(s.meta.cwd.as_deref(), Some("~/Repository/Codex-History"));
    assert_eq!(
        s.meta.metadata,
        Some(serde_json::json!({"source": "telegram"}))
    );
    assert_eq!(s.models, ["gpt-5.2"]);
    assert_eq!(s.turn_count, 1);
}

fn fixture_home() -> PathBuf {
    common::fixtures("hermes")
}

#[test]
fn a_legacy_transcript_keeps_reasoning_tools_failures_and_commits() {
    let f = fixture_home().join("sessions/20260501_093000_c0ffee01.jsonl");
    assert_eq!(Hermes.discover(&[fixture_home()]), std::slice::from_ref(&f));
    assert!(Hermes.detect(&f, &std::fs::read(&f).unwrap()));
    let fp = parse_whole(&Hermes, &f).unwrap();
    assert!(fp.issues.is_empty());
    let s = only(&fp);
    assert_eq!(s.meta.id.as_str(), "hermes:20260501_093000_c0ffee01");
    assert_eq!(
        s.meta.created_at.as_deref(),
        Some("2026-05-01T09:30:00.100Z")
    );
    assert_eq!(s.meta.title.as_deref(), Some("Which branch am I on?"));
    assert_eq!(s.turn_count, 2);
    assert_eq!(count_kind(s, MessageKind::Thinking), 1);
    let results: Vec<(&str, bool)> = s
        .messages
        .iter()
        .filter(|m| m.kind() == MessageKind::ToolResult)
        .map(|m| (m.tool_name.as_deref().unwrap(), m.is_error))
        .collect();
    assert_eq!(results, [("terminal", false), ("read_file", true)]);
    assert!(
        s.refs.iter().any(|r| r.value == "acme/site#12"),
        "{:?}",
        s.refs
    );
    assert_eq!(s.files[0].path, "/etc/hostname");
}

/// A database written from Hermes' schema: a parent session with per-model usage, a rewound
/// message and a compaction summary, and a subagent child with only session totals. The
/// connection is returned open, so the rows are still in the WAL, as while Hermes runs.
fn fixture_database(dir: &Path) -> (PathBuf, Connection) {
    let db = dir.join("state.db");
    let conn = Connection::open(&db).unwrap();
    conn.execute_batch(SCHEMA).unwrap();
    conn.execute_batch(
        "PRAGMA journal_mode = WAL;
         INSERT INTO sessions (id, source, model, started_at, ended_at, cwd, git_branch, title,
                               title_source, input_tokens, output_tokens, estimated_cost_usd)
         VALUES ('20260601_100000_aaaa1111', 'tui', 'gpt-5.2', 1780308000.5, 1780308100.0,
                 '/home/dev/site', 'main', 'Site fixes', 'user', 999, 99, 0.5);
         INSERT INTO sessions (id, source, model, parent_session_id, started_at, input_tokens,
                               output_tokens, cache_read_tokens, actual_cost_usd, end_reason)
         VALUES ('20260601_100030_bbbb2222', 'tool', 'gpt-5.2-mini', '20260601_100000_aaaa1111',
                 1780308030.0, 100, 10, 50, 0.01, 'completed');
         INSERT INTO session_model_usage (session_id, model, input_tokens, output_tokens,
                                          cache_read_tokens, estimated_cost_usd, last_seen)
         VALUES ('20260601_100000_aaaa1111', 'gpt-5.2', 700, 70, 300, 0.4, 1780308100.0),
                ('20260601_100000_aaaa1111', 'gpt-5.2-mini', 200, 20, 0, 0.05, 1780308050.0);
         INSERT INTO messages (session_id, role, content, timestamp, _compressed_summary)
         VALUES ('20260601_100000_aaaa1111', 'user', 'Summary of earlier turns: set up CI.',
                 1780308000.5, 1);
         INSERT INTO messages (session_id, role, content, timestamp)
         VALUES ('20260601_100000_aaaa1111', 'user', 'Fix the footer', 1780308001.0);
         INSERT INTO messages (session_id, role, content, tool_calls, reasoning_content, timestamp)
         VALUES ('20260601_100000_aaaa1111', 'assistant', '',
                 '[{\"id\":\"c1\",\"type\":\"function\",\"function\":{\"name\":\"patch\",\"arguments\":\"{\\\"path\\\": \\\"/home/dev/site/footer.html\\\", \\\"old_string\\\": \\\"2025\\\", \\\"new_string\\\": \\\"2026\\\"}\"}}]',
                 'Change the year.', 1780308002.0);
         INSERT INTO messages (session_id, role, content, tool_call_id, tool_name, timestamp)
         VALUES ('20260601_100000_aaaa1111', 'tool', '{\"success\": true}', 'c1', 'patch',
                 1780308003.0);
         INSERT INTO messages (session_id, role, content, timestamp, active)
         VALUES ('20260601_100000_aaaa1111', 'user', 'Undo that', 1780308004.0, 0),
                ('20260601_100000_aaaa1111', 'assistant', 'Undone.', 1780308005.0, 0);
         INSERT INTO messages (session_id, role, content, timestamp)
         VALUES ('20260601_100000_aaaa1111', 'assistant', 'Footer updated.', 1780308006.0),
                ('20260601_100030_bbbb2222', 'user', 'List the pages', 1780308030.0),
                ('20260601_100030_bbbb2222', 'assistant', 'index.html', 1780308031.0);",
    )
    .unwrap();
    (db, conn)
}

#[test]
fn the_state_database_keeps_parents_rewinds_summaries_and_usage() {
    let dir = tempfile::tempdir().unwrap();
    let (db, writer) = fixture_database(dir.path());
    assert!(dir.path().join("state.db-wal").exists());
    // A legacy file of a session the database holds is not listed; another one is.
    let sessions = dir.path().join("sessions");
    std::fs::create_dir_all(&sessions).unwrap();
    std::fs::write(sessions.join("20260601_100000_aaaa1111.jsonl"), "{}\n").unwrap();
    std::fs::write(sessions.join("session_other.json"), "{}").unwrap();
    assert_eq!(
        Hermes.discover(&[dir.path().to_path_buf()]),
        [sessions.join("session_other.json"), db.clone()]
    );
    let fp = parse_whole(&Hermes, &db).unwrap();
    assert!(fp.issues.is_empty(), "{:?}", fp.issues);
    assert_eq!(fp.sessions.len(), 2);
    let s = by_native(&fp, "20260601_100000_aaaa1111");
    assert_eq!(s.meta.title.as_deref(), Some("Site fixes"));
    assert_eq!(s.meta.title_rank, TitleRank::USER);
    assert_eq!(s.meta.cwd.as_deref(), Some("/home/dev/site"));
    assert_eq!(s.meta.branch.as_deref(), Some("main"));
    assert_eq!(
        s.meta.created_at.as_deref(),
        Some("2026-06-01T10:00:00.500Z")
    );
    let kinds: Vec<(MessageKind, bool)> = s
        .messages
        .iter()
        .map(|m| (m.kind(), m.on_main_chain))
        .collect();
    use MessageKind::*;
    assert_eq!(
        kinds,
        [
            (Summary, true),
            (Prompt, true),
            (Thinking, true),
            (ToolCall, true),
            (ToolResult, true),
            (Prompt, false),
            (Text, false),
            (Text, true)
        ]
    );
    assert_eq!(s.turn_count, 1);
    assert_eq!(
        s.turns[0].assistant_response.as_deref(),
        Some("Footer updated.")
    );
    assert_eq!(s.files[0].path, "/home/dev/site/footer.html");
    // Per-model rows, not the session totals: counted once.
    let usage: Vec<(&str, u64, u64, u64)> = s
        .usage
        .iter()
        .map(|u| {
            (
                u.request_key.as_str(),
                u.input_tokens,
                u.output_tokens,
                u.cache_read_tokens,
            )
        })
        .collect();
    assert_eq!(
        usage,
        [
            ("model:gpt-5.2:", 700, 70, 300),
            ("model:gpt-5.2-mini:", 200, 20, 0)
        ]
    );
    assert_eq!(s.usage[0].cost_usd, Some(0.4));
    assert_eq!(s.models, ["gpt-5.2", "gpt-5.2-mini"]);
    let child = by_native(&fp, "20260601_100030_bbbb2222");
    assert_eq!(
        child.meta.parent.as_ref().map(|p| p.session_id.as_str()),
        Some("hermes:20260601_100000_aaaa1111")
    );
    assert_eq!(child.usage.len(), 1);
    assert_eq!(child.usage[0].request_key, "session");
    assert_eq!(
        (
            child.usage[0].input_tokens,
            child.usage[0].cache_read_tokens
        ),
        (100, 50)
    );
    assert_eq!(child.usage[0].cost_usd, Some(0.01));
    assert_eq!(
        child.meta.metadata,
        Some(serde_json::json!({"source": "tool", "end_reason": "completed"}))
    );
    drop(writer);
}
