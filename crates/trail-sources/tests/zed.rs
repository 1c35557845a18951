//! Zed agent threads: `threads/threads.db` with zstd-compressed JSON.
//!
//! No Zed threads database is public: the one here is built in the test from Zed's published
//! schema (`zed-industries/zed`, `crates/agent/src/db.rs`: the `threads` table and its later
//! columns) and thread JSON (`DbThread` 0.3.0 with serde's externally tagged messages),
//! compressed with zstd as Zed saves it.

mod common;

use std::path::{Path, PathBuf};

use rusqlite::{params, Connection};
use serde_json::{json, Value};
use trail_model::{MessageKind, SourceKind};
use trail_sources::zed::Zed;
use trail_sources::Source;

const SCHEMA: &str = "
CREATE TABLE threads (id TEXT PRIMARY KEY, summary TEXT NOT NULL, updated_at TEXT NOT NULL,
  data_type TEXT NOT NULL, data BLOB NOT NULL);
ALTER TABLE threads ADD COLUMN parent_id TEXT;
ALTER TABLE threads ADD COLUMN folder_paths TEXT;
ALTER TABLE threads ADD COLUMN folder_paths_order TEXT;
ALTER TABLE threads ADD COLUMN created_at TEXT;
";

const PARENT: &str = "6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b";
const CHILD: &str = "7a2d3b4c-5e6f-4071-9b8c-0d1e2f3a4b5c";

fn parent_thread() -> Value {
    json!({
        "version": "0.3.0",
        "title": "Rename the config loader",
        "updated_at": "2026-10-02T09:15:00Z",
        "model": {"provider": "anthropic", "model": "claude-sonnet-4-5"},
        "messages": [
            {"User": {"id": "u1", "content": [
                {"Text": "Rename load_config to read_config"},
                {"Mention": {"uri": "file:///home/demo/app/src/config.rs", "content": "fn load_config() {}"}}
            ]}},
            {"Agent": {"content": [
                {"Thinking": {"text": "Find the callers first.", "signature": "sig"}},
                {"Text": "Looking at the callers."},
                {"ToolUse": {"id": "tool_1", "name": "read_file", "raw_input": "{\"path\":\"app/src/config.rs\"}",
                             "input": {"path": "app/src/config.rs"}, "is_input_complete": true}},
                {"ToolUse": {"id": "tool_2", "name": "terminal", "raw_input": "{\"command\":\"cargo check\",\"cd\":\"app\"}",
                             "input": {"command": "cargo check", "cd": "app"}, "is_input_complete": true}}
            ], "tool_results": {
                "tool_1": {"tool_use_id": "tool_1", "tool_name": "read_file", "is_error": false,
                           "content": {"Text": "fn load_config() {}"}, "output": null},
                "tool_2": {"tool_use_id": "tool_2", "tool_name": "terminal", "is_error": true,
                           "content": [{"Text": "error[E0425]: cannot find function"}], "output": null}
            }, "reasoning_details": null}},
            "Resume",
            {"User": {"id": "u2", "content": [{"Text": "Fix the error"}]}},
            {"Agent": {"content": [{"Text": "Fixed."}, {"RedactedThinking": "abc"}], "tool_results": {}}}
        ],
        "cumulative_token_usage": {"input_tokens": 3000, "output_tokens": 400,
                                   "cache_creation_input_tokens": 100, "cache_read_input_tokens": 2000},
        "request_token_usage": {"u1": {"input_tokens": 1200, "output_tokens": 150,
                                       "cache_creation_input_tokens": 100, "cache_read_input_tokens": 800}},
        "detailed_summary": null
    })
}

fn child_thread() -> Value {
    json!({
        "version": "0.3.0",
        "title": "Find callers",
        "updated_at": "2026-10-02T09:12:00Z",
        "subagent_context": {"parent_thread_id": PARENT},
        "messages": [
            {"User": {"id": "c1", "content": [{"Text": "List the callers of load_config"}]}},
            {"Agent": {"content": [{"Text": "Two callers."}], "tool_results": {}}}
        ],
        "cumulative_token_usage": {"input_tokens": 500, "output_tokens": 40,
                                   "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0},
        "request_token_usage": {}
    })
}

/// `<data>/threads/threads.db`: the parent thread compressed, its sub-agent as plain JSON.
fn build(data: &Path) -> PathBuf {
    let dir = data.join("threads");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("threads.db");
    let conn = Connection::open(&path).unwrap();
    conn.execute_batch(SCHEMA).unwrap();
    let blob = zstd::encode_all(parent_thread().to_string().as_bytes(), 3).unwrap();
    conn.execute(
        "INSERT INTO threads VALUES (?1, 'Rename the config loader', '2026-10-02T09:15:00+00:00',
           'zstd', ?2, NULL, ?3, '0', '2026-10-02T09:10:00+00:00')",
        params![PARENT, blob, "/home/demo/app\n/home/demo/lib"],
    )
    .unwrap();
    conn.execute(
        "INSERT INTO threads VALUES (?1, 'Find callers', '2026-10-02T09:12:00+00:00', 'json', ?2,
           ?3, '/home/demo/app', '0', '2026-10-02T09:11:00+00:00')",
        params![CHILD, child_thread().to_string().into_bytes(), PARENT],
    )
    .unwrap();
    path
}

/// Counts made by decoding the rows in the test (zstd + serde_json), not with the parser:
/// threads, `User` messages, `ToolUse` items, and the cumulative input and output tokens.
fn independent_counts(db: &Path) -> (usize, usize, usize, u64, u64) {
    let conn = Connection::open(db).unwrap();
    let mut stmt = conn.prepare("SELECT data_type, data FROM threads").unwrap();
    let threads: Vec<Value> = stmt
        .query_map([], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, Vec<u8>>(1)?))
        })
        .unwrap()
        .map(|r| {
            let (kind, data) = r.unwrap();
            let json = if kind == "zstd" {
                zstd::decode_all(&data[..]).unwrap()
            } else {
                data
            };
            serde_json::from_slice(&json).unwrap()
        })
        .collect();
    let messages = || {
        threads
            .iter()
            .flat_map(|t| t["messages"].as_array().unwrap())
    };
    let users = messages().filter(|m| m.get("User").is_some()).count();
    let tools = messages()
        .filter_map(|m| m.pointer("/Agent/content").and_then(Value::as_array))
        .flatten()
        .filter(|c| c.get("ToolUse").is_some())
        .count();
    let tok = |k: &str| -> u64 {
        threads
            .iter()
            .map(|t| t["cumulative_token_usage"][k].as_u64().unwrap())
            .sum()
    };
    (
        threads.len(),
        users,
        tools,
        tok("input_tokens"),
        tok("output_tokens"),
    )
}

#[test]
fn zed_threads_are_found_and_detected() {
    let tmp = tempfile::tempdir().unwrap();
    let db = build(&tmp.path().join("zed"));
    assert_eq!(Zed.discover(&[tmp.path().join("zed")]), vec![db.clone()]);
    assert_eq!(
        Zed.discover(&[tmp.path().join("zed/threads")]),
        vec![db.clone()]
    );
    let head = std::fs::read(&db).unwrap();
    assert!(Zed.detect(&db, &head[..100]));
}

#[test]
fn a_zed_database_gives_prompts_tools_thinking_usage_and_subagents() {
    let tmp = tempfile::tempdir().unwrap();
    let db = build(&tmp.path().join("zed"));
    let (threads, prompts, tools, input, output) = independent_counts(&db);
    let fp = common::parse_whole(&Zed, &db).unwrap();
    assert!(fp.issues.is_empty(), "{:?}", fp.issues);
    assert_eq!(fp.sessions.len(), threads);
    let sum =
        |k: MessageKind| -> usize { fp.sessions.iter().map(|s| common::count_kind(s, k)).sum() };
    assert_eq!(sum(MessageKind::Prompt), prompts);
    assert_eq!(sum(MessageKind::ToolCall), tools);
    let usage: Vec<_> = fp.sessions.iter().flat_map(|s| &s.usage).collect();
    assert_eq!(usage.iter().map(|u| u.input_tokens).sum::<u64>(), input);
    assert_eq!(usage.iter().map(|u| u.output_tokens).sum::<u64>(), output);

    let parent = common::by_native(&fp, PARENT);
    assert_eq!(parent.meta.source, SourceKind::Zed);
    assert_eq!(parent.meta.id.as_str(), PARENT);
    assert_eq!(parent.meta.cwd.as_deref(), Some("/home/demo/app"));
    assert_eq!(
        parent.meta.created_at.as_deref(),
        Some("2026-10-02T09:10:00.000Z")
    );
    assert_eq!(parent.turn_count, 2);
    assert_eq!(parent.models, vec!["claude-sonnet-4-5".to_string()]);
    assert_eq!(common::count_kind(parent, MessageKind::Thinking), 2);
    assert_eq!(common::count_kind(parent, MessageKind::Meta), 1);
    // The request map names one request; the rest of the cumulative usage is one more record.
    assert_eq!(parent.usage.len(), 2);
    assert_eq!(parent.usage[0].cache_read_tokens, 800);
    assert_eq!(
        parent
            .usage
            .iter()
            .map(|u| u.cache_read_tokens)
            .sum::<u64>(),
        2000
    );
    let failed = parent
        .messages
        .iter()
        .find(|m| {
            m.kind() == MessageKind::ToolResult && m.tool_call_id.as_deref() == Some("tool_2")
        })
        .unwrap();
    assert!(failed.is_error);
    assert_eq!(
        failed.tool_output.as_deref(),
        Some("error[E0425]: cannot find function")
    );
    assert!(parent.files.iter().any(|f| f.path == "app/src/config.rs"));

    let child = common::by_native(&fp, CHILD);
    assert_eq!(
        child.meta.parent.as_ref().unwrap().session_id.as_str(),
        PARENT
    );
    assert!(child.usage.iter().all(|u| u.is_sidechain));
}

#[test]
fn a_row_that_does_not_decode_is_an_issue_and_the_rest_is_kept() {
    let tmp = tempfile::tempdir().unwrap();
    let db = build(&tmp.path().join("zed"));
    {
        let conn = Connection::open(&db).unwrap();
        conn.execute(
            "INSERT INTO threads (id, summary, updated_at, data_type, data)
             VALUES ('bad', 'x', '2026-10-02T09:20:00Z', 'zstd', X'00010203')",
            [],
        )
        .unwrap();
    }
    let fp = common::parse_whole(&Zed, &db).unwrap();
    assert_eq!(fp.sessions.len(), 2);
    assert_eq!(fp.issues.len(), 1);
    assert!(fp.issues[0].reason.contains("zstd"));
}
